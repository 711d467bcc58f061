//! Signals between machines relayed to the concerns they concern, until none is left.

use super::*;

impl Engine {
    /// Relays queued signals; true when there were any.
    pub(super) fn relay_signals(&mut self, now: Time) -> bool {
        let mut any = false;
        let mut local_ended = None;
        let mut rekeys = Vec::new();
        while let Some(signal) = self.memory.signals.pop_front() {
            any = true;
            self.own_changes = self.own_changes.wrapping_add(1);
            let requested = self.inputs.requested_session_id.clone();
            let (mut ctx, p) = self.ctx(now);
            match signal {
                Signal::Upsert(session) => p
                    .env
                    .handle_with_context(&EnvEvent::Upsert(&session), &mut ctx),
                Signal::Opened {
                    session,
                    launched,
                    listed,
                } => {
                    if listed {
                        p.env
                            .handle_with_context(&EnvEvent::Upsert(&session), &mut ctx);
                    }
                    let origin = if launched {
                        Origin::Launched
                    } else {
                        Origin::Created
                    };
                    p.selection.handle(&SelEvent::Choose {
                        session_uid: &session.uid,
                        origin,
                    });
                    if launched {
                        // SEL-15, OI-15: ordered after the selection it follows.
                        ctx.emit(Event::RequestVisible);
                    }
                }
                Signal::DetailLoaded { session_uid } => {
                    p.selection.handle(&SelEvent::DetailLoaded {
                        session_uid: &session_uid,
                    });
                    // A record read while no turn of ours runs tells of other writers again.
                    if !p.works.is_running(&session_uid)
                        && let Some(work) = p.works.get_mut(&session_uid)
                    {
                        work.own_working = false;
                    }
                }
                Signal::DetailFailed { session_uid, error } => {
                    let facts = list_facts(p.env, ctx.inputs.avoid_implicit);
                    p.selection.handle(&SelEvent::DetailFailed {
                        session_uid: &session_uid,
                        error: &error,
                        facts: &facts,
                    });
                    // A session of another Environment never opens here: what was queued for
                    // it here is handed back (nothing written is lost; its own Environment's
                    // queue and stored copy are left alone).
                    if matches!(error, ApiError::WrongEnvironment { .. })
                        && let Some(work) = p.works.get_mut(&session_uid)
                    {
                        for row in work.queue.take_all() {
                            ctx.emit(Event::MessageNotSent {
                                session_uid: Some(session_uid.clone()),
                                text: row.text,
                                reason: error.to_string(),
                                code: crate::FailureCode::SessionInAnotherEnvironment,
                            });
                        }
                    }
                }
                Signal::Notice { session_uid, text } => {
                    let current = selection::selected(p.selection.state()).map(|s| s.0);
                    if current == Some(session_uid.as_str()) {
                        p.selection.handle(&SelEvent::Notice(Some(&text)));
                    }
                }
                Signal::Removed {
                    session_uid,
                    archived,
                } => {
                    let key = ctx.inputs.default_key();
                    let default_uid = default_session::default_session_uid(
                        key.as_ref(),
                        p.default.inner(),
                        p.env.inner().sessions(),
                    );
                    let was_default = default_uid == Some(session_uid.as_str());
                    p.env
                        .handle_with_context(&EnvEvent::Remove(&session_uid), &mut ctx);
                    // An archived or deleted default session is asked for again.
                    let forget = DefaultEvent::Forget {
                        session_uid: &session_uid,
                        was_default,
                    };
                    p.default.handle_with_context(&forget, &mut ctx);
                    let facts = list_facts(p.env, ctx.inputs.avoid_implicit);
                    p.selection.handle(&SelEvent::Removed {
                        session_uid: &session_uid,
                        facts: &facts,
                    });
                    if archived && requested.as_deref() == Some(session_uid.as_str()) {
                        // REQ-7: only the engine's own archive of the requested session.
                        ctx.emit(Event::RequestedSessionRemoved { session_uid });
                    }
                }
                Signal::Publish {
                    session_uid,
                    decision,
                } => {
                    let event = RtaEvent::Publish {
                        session: &session_uid,
                        decision: &decision,
                    };
                    p.runtime.handle_with_context(&event, &mut ctx);
                }
                Signal::ModelRequired {
                    origin,
                    agent_uid,
                    agent_label,
                    missing,
                } => {
                    let event = ChoiceEvent::Required {
                        origin: &origin,
                        agent_uid: &agent_uid,
                        agent_label: agent_label.as_deref(),
                        missing,
                    };
                    p.choice.handle_with_context(&event, &mut ctx);
                }
                Signal::DefaultCreated {
                    key,
                    session,
                    listed,
                } => {
                    let event = DefaultEvent::Created {
                        key: &key,
                        session_uid: &session.uid,
                    };
                    p.default.handle_with_context(&event, &mut ctx);
                    if listed {
                        p.env
                            .handle_with_context(&EnvEvent::Upsert(&session), &mut ctx);
                    }
                }
                Signal::DefaultFailed { key, message } => {
                    let event = DefaultEvent::Failed {
                        key: &key,
                        message: &message,
                    };
                    p.default.handle_with_context(&event, &mut ctx);
                }
                Signal::DefaultAbandoned { key } => {
                    p.default
                        .handle_with_context(&DefaultEvent::Abandoned(&key), &mut ctx);
                }
                Signal::PickerChoice {
                    session_uid,
                    choice,
                } => {
                    let event = PickerEvent::Choice {
                        session_uid: &session_uid,
                        choice: &choice,
                    };
                    p.picker.handle_with_context(&event, &mut ctx);
                }
                Signal::RecordUpdated(record) => {
                    p.hydration
                        .handle_with_context(&HydEvent::RecordUpdated(&record), &mut ctx);
                }
                Signal::HistoryApplied { session_uid } => {
                    let h = p.hydration.inner();
                    let own = p.works.get(&session_uid).is_some_and(|w| w.own_working);
                    let restored = h.history.value().map(|history| {
                        // The record's `working` of our own turn is not another run's.
                        let working = h.detail.value().is_none_or(|r| r.working && !own);
                        crate::concerns::send::Restored::from_history(history, working)
                    });
                    let running = p.works.is_running(&session_uid);
                    let work = p.works.entry(&mut ctx, &session_uid);
                    work.thread_cleared = false;
                    work.run
                        .handle_with_context(&RunEvent::HistoryApplied, &mut ctx.work());
                    // adr-notes 8: a session opened from its history says how its last run
                    // went, unless a turn of ours runs now.
                    if let Some(restored) = restored.filter(|_| !running && work.restorable) {
                        work.run
                            .handle_with_context(&RunEvent::Restored(&restored), &mut ctx.work());
                    }
                }
                Signal::CancelFailed { session_uid, text } => {
                    // ADR 099: after a stop the runtime's list says whether it still works.
                    local_ended = local_ended.or(Some(false));
                    if let Some(work) = p.works.get_mut(&session_uid) {
                        work.run
                            .handle_with_context(&RunEvent::CancelFailed(&text), &mut ctx.work());
                    }
                    ctx.memory
                        .signals
                        .push_back(Signal::Notice { session_uid, text });
                }
                Signal::CancelAccepted { session_uid } => {
                    local_ended = local_ended.or(Some(false));
                    // OI-19: the cancel route answered 2xx: no notice is left about the run.
                    if let Some(work) = p.works.get_mut(&session_uid) {
                        work.run
                            .handle_with_context(&RunEvent::CancelAccepted, &mut ctx.work());
                    }
                    let current = selection::selected(p.selection.state()).map(|s| s.0);
                    if current == Some(session_uid.as_str()) {
                        p.selection.handle(&SelEvent::Notice(None));
                    }
                }
                Signal::Rekey { from, to } => rekeys.push((from, to)),
                Signal::RunEnded(ended) => {
                    local_ended = Some(matches!(ended.end, RunEnd::Failed(_)));
                    let on_screen = selection::selected(p.selection.state())
                        .is_some_and(|(uid, _)| uid == ended.session_uid);
                    let work = p.works.entry(&mut ctx, &ended.session_uid);
                    for event in work.turn_ended(*ended, on_screen) {
                        ctx.emit(event);
                    }
                }
            }
        }
        crate::io::release_if_empty(&mut self.memory.signals);
        let (backend, mut lent) = self.lend(now);
        for (from, to) in rekeys {
            backend.rekey(&from, &to, &mut lent);
        }
        // A turn or a stop ended: the local parts, there only with a local source, read the
        // runtime's conversations again (ADR 099); the platform has nothing to do here.
        if let Some(failed) = local_ended {
            backend.turn_ended(failed, &mut lent.ctx);
        }
        any
    }
}
