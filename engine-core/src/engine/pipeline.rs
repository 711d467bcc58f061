//! One round of level rules, in dependency order.

use super::*;

impl Engine {
    /// One round of the level rules, in dependency order.
    pub(super) fn evaluate(&mut self, now: Time) {
        // ADR 099: with a local source, its parts' rules instead of the platform's.
        let (backend, mut lent) = self.lend(now);
        if !backend.local_round(&mut lent) {
            self.evaluate_platform(now);
        }
        // The runs' clocks and the queue rules, on either backend.
        self.evaluate_work(now);
    }

    /// The platform's level rules.
    fn evaluate_platform(&mut self, now: Time) {
        // SEL-5 to SEL-7: once per launchKey, only while visible and an Environment is active.
        let launch = self
            .inputs
            .launch_target
            .clone()
            .filter(|_| self.inputs.visible && self.inputs.environment_uid.is_some());
        if let Some(target) = launch
            && self.inputs.marks.opened_launch_key != Some(target.launch_key)
        {
            self.inputs.marks.opened_launch_key = Some(target.launch_key);
            let agent = non_blank(Some(&target.agent_id));
            self.open(OpenKind::Launch, agent, target.label.clone(), now);
        }
        let key = self.inputs.default_key();
        let combination = self.inputs.default_combination();
        let (mut ctx, p) = self.ctx(now);
        let launched = p.is_launched();
        let inputs = ctx.inputs;
        // HYD-12, RTA-26: the list is read while visible, and not for a launched session.
        let want_read = inputs.visible && inputs.environment_uid.is_some() && !launched;
        p.env
            .handle_with_context(&EnvEvent::Evaluate { want_read }, &mut ctx);

        let default_state = inputs.shows_default_session && !launched;
        let name = inputs
            .default_session
            .as_ref()
            .map(|d| d.name.as_str())
            .unwrap_or_default();
        p.default.handle_with_context(
            &DefaultEvent::Evaluate {
                key: combination.as_ref(),
                may_request: default_state && key.is_some(),
                name,
            },
            &mut ctx,
        );

        let list = p.env.inner().current();
        let default_uid = default_session::default_session_uid(
            key.as_ref(),
            p.default.inner(),
            p.env.inner().sessions(),
        );
        let facts = Facts {
            default_state,
            default_uid,
            implicit_allowed: !inputs.avoid_implicit,
            list: list
                .filter(|l| l.from_platform)
                .map(|l| l.sessions.as_slice()),
        };
        p.selection.handle(&SelEvent::Evaluate(&facts));
        let selected = selection::selected(p.selection.state()).map(|(uid, _)| uid);
        p.hydration.handle_with_context(
            &HydEvent::Evaluate {
                selected,
                visible: inputs.visible,
                streaming: selected.is_some_and(|uid| p.works.is_streaming(uid)),
            },
            &mut ctx,
        );
        // REQ-3: a selected session whose detail has loaded stays in the list, whatever a later
        // list read (which may not name it) says.
        let loaded = p.hydration.inner().detail.value();
        if let Some(record) = loaded.filter(|r| selected == Some(r.uid.as_str()) && !r.is_archived)
            && !p.env.inner().sessions().iter().any(|s| s.uid == record.uid)
        {
            let summary = crate::input::SessionSummary::from(record);
            p.env
                .handle_with_context(&EnvEvent::Upsert(&summary), &mut ctx);
        }
        // RTA-1, RTA-2, RTA-25: the session in view is checked, unless it is a launched session
        // before its first send.
        // RTA-2: a held send keeps following its start while the chat is hidden.
        let active = selected.filter(|uid| {
            (inputs.visible || p.works.is_held(uid))
                && (!launched_now(p.selection) || p.works.has_sent(uid))
        });
        let agent_name = active.and_then(|uid| {
            let from_detail = p
                .hydration
                .inner()
                .detail
                .value()
                .and_then(|r| r.agent_name.as_deref());
            from_detail.or_else(|| {
                p.env
                    .inner()
                    .sessions()
                    .iter()
                    .find(|s| s.uid == uid)
                    .and_then(|s| s.agent_name.as_deref())
            })
        });
        p.runtime
            .handle_with_context(&RtaEvent::Evaluate { active, agent_name }, &mut ctx);
        self.evaluate_models(now);
    }
}
