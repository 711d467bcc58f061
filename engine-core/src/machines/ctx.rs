//! What every machine handler receives besides its own state: the time, the host's inputs, the
//! request mechanism ([`Io`]) and what the engine remembers across requests ([`Memory`]).

use std::collections::{BTreeSet, VecDeque};

use crate::api::ApiError;
use crate::event::Event;
use crate::inputs::Inputs;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Io, Outcome, Owner};
use crate::time::Time;

use super::Signal;
use super::runtime_access::Confirmations;

/// At most this many runtime bases are remembered as root-relative.
const MAX_ROOT_RELATIVE_BASES: usize = 64;

/// What the engine remembers beside its requests: the signals machines raise for each other,
/// serving confirmations and wake clocks per chat URL (OI-5, OI-9: shared by runtime access,
/// sends and cancels), and the runtime bases whose `rpc_url` came root-relative.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    pub signals: VecDeque<Signal>,
    pub confirmations: Confirmations,
    /// Runtime bases whose `rpc_url` came root-relative: their requests are marked so, and
    /// shells do not pass them through the host's URL rewrite.
    root_relative_bases: BTreeSet<String>,
}

impl Memory {
    /// Notes, for every finished runtime-access answer (its owner may still drop it as stale),
    /// whether its `rpc_url` came root-relative; `platform` is the platform's base.
    pub(crate) fn note_answer(&mut self, answer: &Answer, platform: &str) {
        if let (ApiCall::ResolveRuntimeAccess { .. }, Outcome::Http { status, body }) =
            (&answer.call, &answer.outcome)
            && (200..300).contains(status)
        {
            self.note_rpc_url(body, platform);
        }
    }

    /// Remembers whether a runtime-access answer's `rpc_url` came root-relative.
    fn note_rpc_url(&mut self, body: &[u8], platform: &str) {
        let Some((base, root_relative)) = crate::api::rpc_url_of(body, platform) else {
            return;
        };
        if !root_relative {
            self.root_relative_bases.remove(&base);
            return;
        }
        if self.root_relative_bases.len() >= MAX_ROOT_RELATIVE_BASES {
            self.root_relative_bases.clear();
        }
        self.root_relative_bases.insert(base);
    }

    /// Whether a runtime call goes to a base that came root-relative.
    fn root_relative(&self, call: &ApiCall) -> bool {
        match call {
            ApiCall::ConfirmAgent { rpc_url, .. }
            | ApiCall::SendMessage { rpc_url, .. }
            | ApiCall::CancelRun { rpc_url, .. } => self.root_relative_bases.contains(rpc_url),
            _ => false,
        }
    }
}

/// The context every machine handler receives.
pub(crate) struct Ctx<'a> {
    /// The time of the input being handled (monotonic).
    pub now: Time,
    pub inputs: &'a Inputs,
    pub io: &'a mut Io,
    pub memory: &'a mut Memory,
}

impl Ctx<'_> {
    /// statig's `after_transition` for every machine driven with a context: a transition that
    /// changed the state counts as a change (the settle loop's fixed point, [`crate::Revisions`]).
    pub(crate) fn transitioned<S: PartialEq>(&mut self, source: &S, target: &S) {
        crate::revision::count_transition(&mut self.io.transitions, source, target);
    }

    pub(crate) fn send(&mut self, owner: Owner, call: ApiCall) -> Result<RequestId, ApiError> {
        self.io.send(self.inputs, owner, call)
    }

    /// A request to an Agent runtime with its runtime token, marked root-relative when its
    /// base came so.
    pub(crate) fn send_runtime(
        &mut self,
        owner: Owner,
        call: ApiCall,
        token: &str,
    ) -> Result<RequestId, ApiError> {
        let root_relative = self.memory.root_relative(&call);
        self.io.send_runtime(owner, call, token, root_relative)
    }

    pub(crate) fn emit(&mut self, event: Event) {
        self.io.events.push_back(event);
    }
}
