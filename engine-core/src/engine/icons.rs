//! The engine's side of Agent icons (ADR 090, P13/P14): the host's request, the answers, the
//! reset on a change of person or Environment, and the snapshot value.

use crate::time::Time;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::Engine;
use crate::concerns::icons::IconsEvent;
use crate::io::Answer;
use crate::snapshot::AgentIcon;

impl Engine {
    /// `Command::RequestAgentIcons`: only with an active Environment and a platform credential
    /// (the reference reads icons only for a signed-in person).
    pub(super) fn request_agent_icons(&mut self, agents: &[String], now: Time) {
        let environment = self
            .inputs
            .environment_uid
            .clone()
            .filter(|_| self.inputs.person.token.is_some());
        let event = IconsEvent::Request {
            environment: environment.as_deref(),
            agents,
        };
        self.icons_event(&event, now);
    }

    /// A P13 or P14 answer.
    pub(super) fn icons_answered(&mut self, answer: &Answer, now: Time) {
        self.icons_event(&IconsEvent::Answer(answer), now);
    }

    /// What belongs to the old person or Environment goes (abort included).
    pub(super) fn reset_icons(&mut self, now: Time) {
        self.icons_event(&IconsEvent::Reset, now);
    }

    fn icons_event(&mut self, event: &IconsEvent<'_>, now: Time) {
        let mut ctx = crate::backend::ctx(now, &self.inputs, &mut self.io, &mut self.memory);
        self.backend
            .platform
            .icons
            .handle_with_context(event, &mut ctx);
    }

    /// `Snapshot::agent_icons`: shared with the icons machine, rebuilt only when it changes.
    pub(crate) fn agent_icons(&self) -> Arc<BTreeMap<String, AgentIcon>> {
        self.backend.platform.icons.inner().view()
    }
}
