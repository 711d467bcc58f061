//! What a machine handler receives besides its own state: the time, the request mechanism
//! ([`Io`]) and what the engine remembers across requests ([`Memory`]); with them [`Ctx`] lends
//! the host's inputs, and [`WorkCtx`] (a session's run and cancel) only how the runtime is
//! reached ([`Reach`]) and the person's credential.

use litemap::LiteMap;
use std::collections::VecDeque;

use crate::api::ApiError;
use crate::event::Event;
use crate::input::Person;
use crate::inputs::Inputs;
use crate::intent::{ApiCall, Credential, RequestId};
use crate::io::{Answer, Io, Outcome, Owner};
use crate::source::LocalSource;
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
    root_relative_bases: LiteMap<String, ()>,
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
        self.root_relative_bases.insert(base, ());
    }

    /// Whether a runtime call goes to a base that came root-relative.
    fn root_relative(&self, call: &ApiCall) -> bool {
        match call {
            ApiCall::ConfirmAgent { rpc_url, .. }
            | ApiCall::SendMessage { rpc_url, .. }
            | ApiCall::CancelRun { rpc_url, .. } => self.root_relative_bases.contains_key(rpc_url),
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
    /// How the runtime is reached, as the backend says ([`crate::backend::ctx`] builds every
    /// `Ctx`): a machine never reads the source itself.
    pub reach: Reach<'a>,
}

impl Ctx<'_> {
    /// statig's `after_transition` for every machine driven with a context: a transition that
    /// changed the state counts as a change (the settle loop's fixed point, [`crate::Revisions`]).
    pub(crate) fn transitioned<S: PartialEq>(&mut self, source: &S, target: &S) {
        crate::revision::count_transition(&mut self.io.transitions, source, target);
    }

    /// A platform call with the person's credential (refused while a local source is set).
    pub(crate) fn send(&mut self, owner: Owner, call: ApiCall) -> Result<RequestId, ApiError> {
        let local = self.reach.source().is_some();
        let credential = credential(&self.inputs.person);
        self.io.send(local, credential, owner, call)
    }

    /// A request to the local runtime (refused without a local source).
    pub(crate) fn send_local(
        &mut self,
        owner: Owner,
        call: ApiCall,
    ) -> Result<RequestId, ApiError> {
        self.io.send_local(self.reach.source(), owner, call)
    }

    pub(crate) fn emit(&mut self, event: Event) {
        self.io.events.push_back(event);
    }

    /// The context of a session's work (its run and its cancel), which sees how the runtime is
    /// reached and the person's credential, not the inputs.
    pub(crate) fn work(&mut self) -> WorkCtx<'_> {
        WorkCtx {
            now: self.now,
            io: &mut *self.io,
            memory: &mut *self.memory,
            reach: self.reach,
            credential: credential(&self.inputs.person),
        }
    }
}

/// The person's platform credential (`Bearer` unless a type is given).
fn credential(person: &Person) -> Option<Credential<'_>> {
    person.token.as_ref().map(|t| Credential {
        token_type: person.token_type.as_deref().unwrap_or("Bearer"),
        token: t.expose(),
    })
}

/// How a turn or a cancel reaches the Agent's runtime: through the platform (access resolved,
/// the runtime token, SND-3) or straight to a local runtime (ADR 099: no access step and no
/// credential). A source change stops every run (it is part of the scope), so a turn sees one
/// reach from start to end.
#[derive(Clone, Copy)]
pub(crate) enum Reach<'a> {
    Platform,
    Local(&'a LocalSource),
}

impl<'a> Reach<'a> {
    pub(crate) fn source(self) -> Option<&'a LocalSource> {
        match self {
            Reach::Local(source) => Some(source),
            Reach::Platform => None,
        }
    }

    /// SND-23: a refused (401, 403) message or cancel request resolves access and goes once
    /// more; a local runtime takes no credential to renew.
    pub(crate) fn retries_auth(self) -> bool {
        matches!(self, Reach::Platform)
    }

    /// SND-15: after a message request got no answer, access is resolved again; a local
    /// runtime is checked again by its admission instead.
    pub(crate) fn rechecks_after_no_answer(self) -> bool {
        matches!(self, Reach::Platform)
    }

    /// A local runtime names the conversation in its answer's head
    /// (`X-Agent-Session-Uid`).
    pub(crate) fn names_conversation(self) -> bool {
        matches!(self, Reach::Local(_))
    }

    /// RU-22: with a platform session selected, a stop always sends the cancel request, even
    /// when nothing runs; a local runtime's stop goes only while the conversation works (its
    /// engine's own rule, RU-24 otherwise).
    pub(crate) fn cancels_without_work(self) -> bool {
        matches!(self, Reach::Platform)
    }

    /// A stop the runtime accepted shows "Run cancellation requested." until the run ends; a
    /// local runtime's ends at "Run cancelled." (the reference's local engine).
    pub(crate) fn shows_cancel_requested(self) -> bool {
        matches!(self, Reach::Platform)
    }

    /// A local runtime that does not know the conversation has nothing to stop (a new one it
    /// has not named yet): its 404 to a cancel is done.
    pub(crate) fn cancel_404_is_done(self) -> bool {
        matches!(self, Reach::Local(_))
    }
}

/// The context of a session's run and cancel: no inputs, only how the runtime is reached and
/// the person's current credential (a token change mid-turn applies to SND-23's re-resolve).
pub(crate) struct WorkCtx<'a> {
    pub now: Time,
    pub io: &'a mut Io,
    pub memory: &'a mut Memory,
    pub reach: Reach<'a>,
    credential: Option<Credential<'a>>,
}

impl WorkCtx<'_> {
    /// statig's `after_transition` (as [`Ctx::transitioned`]).
    pub(crate) fn transitioned<S: PartialEq>(&mut self, source: &S, target: &S) {
        crate::revision::count_transition(&mut self.io.transitions, source, target);
    }

    /// A platform call with the person's credential (refused for a local runtime).
    pub(crate) fn send(&mut self, owner: Owner, call: ApiCall) -> Result<RequestId, ApiError> {
        let local = self.reach.source().is_some();
        self.io.send(local, self.credential, owner, call)
    }

    /// A request to the local runtime (refused when the runtime is reached through the
    /// platform).
    pub(crate) fn send_local(
        &mut self,
        owner: Owner,
        call: ApiCall,
    ) -> Result<RequestId, ApiError> {
        self.io.send_local(self.reach.source(), owner, call)
    }

    pub(crate) fn emit(&mut self, event: Event) {
        self.io.events.push_back(event);
    }
}

/// What the confirm sub-flow ([`super::confirm`]) needs of a context: a machine's and a
/// session's work both confirm Agents.
pub(crate) trait Context {
    fn now(&self) -> Time;
    fn io(&mut self) -> &mut Io;
    fn memory(&mut self) -> &mut Memory;

    /// A request to an Agent runtime with its runtime token, marked root-relative when its
    /// base came so.
    fn send_runtime(
        &mut self,
        owner: Owner,
        call: ApiCall,
        token: &str,
    ) -> Result<RequestId, ApiError> {
        let root_relative = self.memory().root_relative(&call);
        self.io().send_runtime(owner, call, token, root_relative)
    }
}

impl Context for Ctx<'_> {
    fn now(&self) -> Time {
        self.now
    }
    fn io(&mut self) -> &mut Io {
        self.io
    }
    fn memory(&mut self) -> &mut Memory {
        self.memory
    }
}

impl Context for WorkCtx<'_> {
    fn now(&self) -> Time {
        self.now
    }
    fn io(&mut self) -> &mut Io {
        self.io
    }
    fn memory(&mut self) -> &mut Memory {
        self.memory
    }
}
