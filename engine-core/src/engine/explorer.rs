//! The session explorer (its archived list and search), and how it follows the removals and
//! restorations of sessions (`concerns/removal.rs`).

use super::*;
use crate::concerns::removal::{Follow, Removals};

impl Engine {
    /// One explorer read handles an event.
    pub(super) fn explore(&mut self, kind: ReadKind, event: &ExplorerEvent<'_>, now: Time) {
        let Engine {
            inputs,
            io,
            memory,
            backend:
                Backend {
                    platform:
                        PlatformParts {
                            archived, search, ..
                        },
                    ..
                },
            ..
        } = self;
        let mut ctx = crate::backend::ctx(now, inputs, io, memory);
        let machine = match kind {
            ReadKind::Archived => archived,
            ReadKind::Search => search,
        };
        machine.handle_with_context(event, &mut ctx);
    }

    /// `fetchArchivedAgentSessions`: the Agent named, else the selected session's, else the
    /// default session's; the person's uid and an Environment are required.
    pub(super) fn fetch_archived(
        &mut self,
        agent_uid: Option<&str>,
        limit: Option<u32>,
        now: Time,
    ) {
        let agent = non_blank(agent_uid)
            .or_else(|| self.selected_agent())
            .or_else(|| self.inputs.default_agent());
        let scope = self.inputs.scope();
        match (scope.environment, scope.person, agent) {
            (Some(environment_uid), Some(created_by_user_uid), Some(agent_uid)) => {
                let call = ApiCall::ListArchivedSessions {
                    environment_uid,
                    agent_uid: agent_uid.clone(),
                    created_by_user_uid,
                    limit: crate::concerns::explorer::clamp_limit(limit),
                };
                let event = ExplorerEvent::Read {
                    call: &call,
                    subject: &agent_uid,
                };
                self.explore(ReadKind::Archived, &event, now);
            }
            (environment, _, agent) => {
                let message = match environment {
                    None => ApiError::no_environment().to_string(),
                    Some(_) => {
                        "The archived session list requires agent_uid and created_by_user_uid."
                            .to_owned()
                    }
                };
                let event = ExplorerEvent::Refuse {
                    message: &message,
                    subject: agent.as_deref(),
                };
                self.explore(ReadKind::Archived, &event, now);
            }
        }
    }

    /// `searchAgentSessions`: `q` trimmed; a blank query clears the search without a request.
    pub(super) fn search(&mut self, query: &str, limit: Option<u32>, now: Time) {
        let Some(query) = non_blank(Some(query)) else {
            self.explore(ReadKind::Search, &ExplorerEvent::Clear, now);
            return;
        };
        let scope = self.inputs.scope();
        match (scope.environment, scope.person) {
            (Some(environment_uid), Some(created_by_user_uid)) => {
                let call = ApiCall::SearchSessions {
                    environment_uid,
                    created_by_user_uid,
                    query: query.clone(),
                    limit: crate::concerns::explorer::clamp_limit(limit),
                };
                let event = ExplorerEvent::Read {
                    call: &call,
                    subject: &query,
                };
                self.explore(ReadKind::Search, &event, now);
            }
            (environment, _) => {
                let message = match environment {
                    None => ApiError::no_environment().to_string(),
                    Some(_) => {
                        "Session search requires created_by_user_uid and a query.".to_owned()
                    }
                };
                let event = ExplorerEvent::Refuse {
                    message: &message,
                    subject: Some(&query),
                };
                self.explore(ReadKind::Search, &event, now);
            }
        }
    }

    /// The Agent of the selected session: from its loaded record, else from the list.
    pub(super) fn selected_agent(&self) -> Option<String> {
        let (uid, _) = selection::selected(self.selection.state())?;
        let from_detail = self
            .backend
            .platform
            .hydration
            .inner()
            .detail
            .value()
            .and_then(|r| r.agent_uid.clone());
        from_detail.or_else(|| {
            self.backend
                .platform
                .env
                .inner()
                .sessions()
                .iter()
                .find(|s| s.uid == uid)
                .and_then(|s| s.agent_uid.clone())
        })
    }

    /// The removals beside a context for them.
    pub(super) fn removal_ctx(&mut self, now: Time) -> (Ctx<'_>, &mut Removals) {
        let Engine {
            inputs,
            io,
            memory,
            backend:
                Backend {
                    platform: PlatformParts { removals, .. },
                    ..
                },
            ..
        } = self;
        let ctx = crate::backend::ctx(now, inputs, io, memory);
        (ctx, removals)
    }

    /// `archiveAgentSession` (`archived`), `deleteAgentSession` and `unarchiveAgentSession`.
    pub(super) fn removal_command(&mut self, session_uid: String, op: RemovalOp, now: Time) {
        let (mut ctx, removals) = self.removal_ctx(now);
        match op {
            RemovalOp::Archive => removals.remove(&mut ctx, session_uid, true),
            RemovalOp::Delete => removals.remove(&mut ctx, session_uid, false),
            RemovalOp::Unarchive => removals.restore(&mut ctx, session_uid),
        }
    }

    /// An archive, delete or unarchive answered: the explorer follows a success.
    pub(super) fn removal_answered(&mut self, answer: &Answer, now: Time) {
        let (mut ctx, removals) = self.removal_ctx(now);
        let follow = match answer.owner {
            Owner::Unarchive => removals.restored(&mut ctx, answer),
            _ => removals.removed(&mut ctx, answer),
        };
        match follow {
            Some(Follow::Removed {
                session_uid,
                archived,
            }) => {
                let gone = ExplorerEvent::Drop(&session_uid);
                self.explore(ReadKind::Search, &gone, now);
                if archived {
                    self.explore(ReadKind::Archived, &ExplorerEvent::Reload, now);
                } else {
                    self.explore(ReadKind::Archived, &gone, now);
                }
            }
            // The reference reloads the archived list shown after a change.
            Some(Follow::Restored) => self.explore(ReadKind::Archived, &ExplorerEvent::Reload, now),
            None => {}
        }
    }
}

/// Which removal command the host gave.
#[derive(Debug, Clone, Copy)]
pub(super) enum RemovalOp {
    Archive,
    Delete,
    Unarchive,
}
