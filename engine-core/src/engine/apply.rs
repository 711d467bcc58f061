//! A host input applied: the inputs stored, and what a change of scope, visibility or
//! request starts or stops.

use super::*;

impl Engine {
    pub(super) fn apply(&mut self, input: Input, now: Time) {
        match input {
            Input::Person(person) => {
                let token_changed = person.token != self.inputs.person.token;
                let before = self.inputs.scope();
                self.inputs.person = person;
                if self.inputs.scope() != before {
                    self.scope_changed(now);
                } else if token_changed && self.inputs.person.token.is_none() {
                    // Icons are read only for a signed-in person: without a credential they go.
                    self.reset_icons(now);
                } else if token_changed {
                    // OI-26: a new token reads the detail again.
                    let (mut ctx, p) = self.ctx(now);
                    p.hydration
                        .handle_with_context(&HydEvent::RefreshDetail, &mut ctx);
                }
            }
            Input::EnvironmentUid(env) => {
                let env = non_blank(env.as_deref());
                if env != self.inputs.environment_uid {
                    self.inputs.environment_uid = env;
                    self.scope_changed(now);
                }
            }
            Input::IsVisible(v) => {
                let returned = v && !self.inputs.visible;
                self.inputs.visible = v;
                if returned {
                    let (backend, mut lent) = self.lend(now);
                    backend.came_into_view(&mut lent.ctx);
                }
            }
            Input::PageVisible(visible) => {
                let was_hidden = self.inputs.page_hidden;
                self.inputs.page_hidden = !visible;
                match (was_hidden, visible) {
                    (false, false) => self.inputs.marks.page_hidden_since = Some(now),
                    (true, true) => {
                        let since = self.inputs.marks.page_hidden_since.take().unwrap_or(now);
                        let hidden_for = now.saturating_duration_since(since);
                        let (mut ctx, p) = self.ctx(now);
                        p.runtime
                            .handle_with_context(&RtaEvent::PageShown { hidden_for }, &mut ctx);
                    }
                    _ => {}
                }
            }
            Input::RequestedSessionId(id) => {
                let id = non_blank(id.as_deref());
                if id != self.inputs.requested_session_id {
                    self.inputs.requested_session_id = id.clone();
                    self.inputs.marks.requested_before_scope =
                        id.is_some() && !self.scope_complete();
                    if let Some(id) = id {
                        let (backend, mut lent) = self.lend(now);
                        backend.requested(&id, &mut lent);
                    }
                }
            }
            Input::DefaultSession(d) => self.inputs.default_session = d,
            Input::ShowsDefaultSession(shows) => {
                let was = self.inputs.shows_default_session;
                self.inputs.shows_default_session = shows;
                if was && !shows {
                    // OI-14: outside the default-session surface a requested id wins.
                    if let Some(id) = self.inputs.requested_session_id.clone() {
                        self.choose_requested(&id, now);
                    }
                }
            }
            Input::LaunchTarget(t) => self.inputs.launch_target = t,
            Input::AvoidImplicitSessionSelection(v) => self.inputs.avoid_implicit = v,
            // A null viewContext is no viewContext (it cannot be told apart in a trace).
            Input::ViewContext(v) => self.inputs.view_context = v.filter(|v| !v.is_null()),
            Input::StoredSessionsLoaded { key, sessions } => {
                let sessions = sessions.unwrap_or_default();
                let (mut ctx, p) = self.ctx(now);
                p.env.handle_with_context(
                    &EnvEvent::StoredLoaded {
                        key: &key,
                        sessions: &sessions,
                    },
                    &mut ctx,
                );
            }
            Input::StoredQueueLoaded { key, rows } => {
                let stored = rows
                    .as_ref()
                    .map(crate::queue::stored_rows)
                    .unwrap_or_default();
                let session = key
                    .strip_prefix("main_sequence_ai.message_queue.")
                    .map(str::to_owned);
                if let Some(session) = session.filter(|s| self.works.stored_queue_answered(s)) {
                    let (mut ctx, p) = self.ctx(now);
                    let work = p.works.entry(&mut ctx, &session);
                    work.queue.restore(stored);
                    // What storage holds is what we hold now, until it changes.
                    let rows = work.queue.rows.iter().cloned().collect();
                    p.works.stored.set(&session, rows);
                }
            }
            Input::Source(source) => {
                // Only a new display name keeps the runtime, and the scope.
                if crate::backend::set_source(&mut self.inputs, source) {
                    self.source_changed(now);
                }
            }
            Input::StoredSelectionLoaded { key, session_uid } => {
                let (backend, mut lent) = self.lend(now);
                backend.stored_selection(&key, session_uid.as_deref(), &mut lent);
            }
            Input::Command(c) => self.command(c, now),
        }
    }

    /// OI-14's platform rules for a requested id (`PlatformParts::choose_requested`). A change
    /// of surface or scope calls them with a local source too, as before issue 26; the local
    /// round that follows shows the local selection's conversation again when it has one.
    pub(super) fn choose_requested(&mut self, id: &str, now: Time) {
        let (backend, mut lent) = self.lend(now);
        backend.platform.choose_requested(id, &mut lent);
    }

    /// A new source, or none: a change of scope (ENV-2); the local parts of the old source
    /// close and, with a new one, start over.
    fn source_changed(&mut self, now: Time) {
        let (backend, mut lent) = self.lend(now);
        backend.reopen(&mut lent.ctx);
        self.scope_changed(now);
        let (backend, mut lent) = self.lend(now);
        backend.opened(&mut lent);
    }

    /// ENV-1 to ENV-4: a new person or Environment.
    pub(super) fn scope_changed(&mut self, now: Time) {
        // SEL-7: a launch cancelled before it opened is opened again for the new pair.
        if opening::in_flight(self.backend.platform.opening.state())
            .is_some_and(|op| op.kind == OpenKind::Launch)
        {
            self.inputs.marks.opened_launch_key = None;
        }
        let scope = self.inputs.scope();
        let (mut ctx, p) = self.ctx(now);
        p.env
            .handle_with_context(&EnvEvent::ScopeChanged(scope), &mut ctx);
        p.opening.handle_with_context(&OpenEvent::Cancel, &mut ctx);
        p.selection.handle(&SelEvent::Clear);
        p.hydration.handle_with_context(&HydEvent::Reset, &mut ctx);
        p.runtime.handle_with_context(&RtaEvent::Reset, &mut ctx);
        // Runs and cancels of the old pair stop; waiting messages are held (OI-20: away).
        p.works
            .each_run(&mut ctx, &RunEvent::Stop { decision: None });
        // The stopped turns end in the old pair's work, before it is parked: a queued row on
        // its way goes back to its own queue (nothing written is lost, INV-10).
        let signals = std::mem::take(&mut ctx.memory.signals);
        for signal in signals {
            match signal {
                Signal::RunEnded(ended) => {
                    if let Some(work) = p.works.get_mut(&ended.session_uid) {
                        for event in work.turn_ended(*ended, false) {
                            ctx.emit(event);
                        }
                    }
                }
                other => ctx.memory.signals.push_back(other),
            }
        }
        p.works.each_cancel(&mut ctx, &CancelEvent::Reset);
        // What the old pair's queues hold now is stored before they are parked (ADR 087).
        self.persist_queues();
        let (mut ctx, p) = self.ctx(now);
        p.works.switch_scope(ctx.inputs.scope());
        p.choice.handle_with_context(&ChoiceEvent::Reset, &mut ctx);
        p.picker.handle_with_context(&PickerEvent::Reset, &mut ctx);
        let (mut ctx, removals) = self.removal_ctx(now);
        removals.reset(&mut ctx);
        // Nothing of another person or Environment shows in the explorer (ENV-2, INV-10).
        self.explore(ReadKind::Archived, &ExplorerEvent::Clear, now);
        self.explore(ReadKind::Search, &ExplorerEvent::Clear, now);
        // ENV-2 clears the selection. A session requested before the person and the
        // Environment were both known could not be read for them yet, so it carries into the
        // pair that completes them (OI-14: a requested id wins outside the default surface);
        // otherwise the request was consumed.
        if self.inputs.marks.requested_before_scope
            && let Some(id) = self.inputs.requested_session_id.clone()
        {
            self.choose_requested(&id, now);
        }
        self.inputs.marks.requested_before_scope &= !self.scope_complete();
        self.reset_icons(now);
    }

    /// Both the person's uid and an Environment are known.
    pub(super) fn scope_complete(&self) -> bool {
        let scope = self.inputs.scope();
        scope.person.is_some() && scope.environment.is_some()
    }
}
