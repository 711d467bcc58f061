//! The session explorer (its archived list and search) and the removals and restorations
//! of sessions (archive, delete, unarchive).

use super::*;

impl Engine {
    /// One explorer read handles an event.
    pub(super) fn explore(&mut self, kind: ReadKind, event: &ExplorerEvent<'_>, now: Time) {
        let Engine {
            inputs,
            io,
            memory,
            archived,
            search,
            ..
        } = self;
        let mut ctx = Ctx {
            now,
            inputs,
            io,
            memory,
        };
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
                    limit: crate::machines::explorer::clamp_limit(limit),
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
                    limit: crate::machines::explorer::clamp_limit(limit),
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
            .hydration
            .inner()
            .detail
            .value()
            .and_then(|r| r.agent_uid.clone());
        from_detail.or_else(|| {
            self.env
                .inner()
                .sessions()
                .iter()
                .find(|s| s.uid == uid)
                .and_then(|s| s.agent_uid.clone())
        })
    }

    pub(super) fn remove(&mut self, session_uid: String, archived: bool, now: Time) {
        if check_id("session", &session_uid).is_err() {
            self.removal_failed(archived, Some("This session has no identifier.".to_owned()));
            return;
        }
        let call = if archived {
            ApiCall::ArchiveSession {
                session_uid: session_uid.clone(),
            }
        } else {
            ApiCall::DeleteSession {
                session_uid: session_uid.clone(),
            }
        };
        let (mut ctx, _) = self.ctx(now);
        match ctx.send(Owner::Archive, call) {
            Ok(id) => {
                self.removals.insert(
                    id,
                    Removal {
                        session_uid,
                        archived,
                    },
                );
            }
            Err(e) => self.removal_failed(archived, Some(e.to_string())),
        }
    }

    /// `unarchiveAgentSession(uid)`.
    pub(super) fn restore(&mut self, session_uid: String, now: Time) {
        if let Err(e) = check_id("session", &session_uid) {
            self.restore_failed(Some(e.to_string()));
            return;
        }
        let call = ApiCall::UnarchiveSession {
            session_uid: session_uid.clone(),
        };
        let (mut ctx, _) = self.ctx(now);
        match ctx.send(Owner::Unarchive, call) {
            Ok(id) => {
                self.restorations.insert(id, session_uid);
            }
            Err(e) => self.restore_failed(Some(e.to_string())),
        }
    }

    /// The unarchive answer: the restored record joins the list (OI-13: only an unarchived
    /// record of this Environment).
    pub(super) fn restored(&mut self, answer: &Answer, now: Time) {
        if self.restorations.remove(&answer.id).is_none() {
            return;
        }
        let env = self.inputs.environment_uid.clone().unwrap_or_default();
        let record = answer
            .outcome
            .ok_body(&answer.call)
            .and_then(crate::api::parse_session_record)
            .and_then(|r| r.check_created_in(&env).map(|()| r));
        match record {
            Ok(record) if !record.is_archived => {
                let summary = crate::input::SessionSummary::from(&record);
                self.memory.signals.push_back(Signal::Upsert(summary));
                // The reference reloads the archived list shown after a change.
                self.explore(ReadKind::Archived, &ExplorerEvent::Reload, now);
            }
            Ok(_) => self.restore_failed(None),
            Err(e) => self.restore_failed(Some(e.to_string())),
        }
    }

    pub(super) fn restore_failed(&mut self, message: Option<String>) {
        let description = message
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| "Unable to restore this session.".to_owned());
        self.io.events.push_back(Event::Notify(Notice {
            title: "Session not restored".to_owned(),
            description: Some(description),
            variant: NoticeVariant::Error,
        }));
    }

    pub(super) fn removal_failed(&mut self, archived: bool, message: Option<String>) {
        if archived {
            let description =
                message.unwrap_or_else(|| "Unable to archive this session.".to_owned());
            self.io.events.push_back(Event::Notify(Notice {
                title: "Session not archived".to_owned(),
                description: Some(description),
                variant: NoticeVariant::Error,
            }));
        } else {
            self.delete_error =
                Some(message.unwrap_or_else(|| "Delete session failed.".to_owned()));
        }
    }
}
