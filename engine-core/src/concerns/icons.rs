//! ADR 090, P13/P14: Agent icons. One projection per active Environment, read when the host asks
//! for icons and trusted for five minutes; a failed read is tried once more at once, then left
//! (a missing icon is never a failure a person sees). Icon bytes are fetched per icon url for
//! the Agents the host asked for, kept until the person or the Environment changes, fetched
//! again when asked for after five minutes (a failed refresh keeps the bytes held) and, after a
//! failed first load, not before a minute has passed (RU-32 to RU-36).
//!
//! A refreshed image replaces the one held only when its fingerprint differs (RU-35): the
//! answer's `ETag` when it has one, else its bytes. The reference hashes the bytes (SHA-256) and
//! compares the hashes; comparing the bytes themselves decides the same, without a hash. Each
//! image held has a handle (the reference's object URL) that changes exactly when it is
//! replaced.

use std::collections::BTreeMap;

use litemap::LiteMap;
use std::sync::Arc;
use std::time::Duration;

use crate::time::Time;

use bytes::Bytes;
use statig::prelude::*;

use crate::api::{ProjectedIcon, parse_icon_projection};
use crate::concerns::ctx::Ctx;
use crate::intent::MAX_ICON_BYTES;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Outcome as Http, Owner};
use crate::snapshot::{AgentIcon, IconImage, IconStatus};

/// The projection is fresh while younger than this (adr-notes 7).
pub(crate) const PROJECTION_FRESH: Duration = Duration::from_millis(300_000);
/// Held icon bytes are fetched again when asked for at this age or later.
pub(crate) const IMAGE_REFRESH: Duration = Duration::from_millis(300_000);
/// A failed first load of an icon is not tried again before this.
pub(crate) const IMAGE_RETRY: Duration = Duration::from_millis(60_000);
/// At most this many Agents are remembered as wanted (bounding the bytes held).
pub(crate) const MAX_WANTED: usize = 128;

/// The projection held, for the Environment it was read for.
#[derive(Debug, Clone)]
pub(crate) struct Projection {
    pub environment: String,
    pub icons: Arc<BTreeMap<String, ProjectedIcon>>,
    loaded_at: Time,
}

/// An icon's bytes as delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Image {
    pub bytes: Bytes,
    pub content_type: Option<String>,
    pub etag: Option<String>,
    /// `IconImage::handle`.
    pub handle: u64,
}

impl Image {
    /// RU-35: the same image when both have the same `ETag`, or neither has one and the bytes
    /// are the same.
    fn same_fingerprint(&self, etag: Option<&str>, bytes: &[u8]) -> bool {
        match (self.etag.as_deref(), etag) {
            (Some(held), Some(new)) => held == new,
            (None, None) => self.bytes.as_ref() == bytes,
            _ => false,
        }
    }
}

/// Where the bytes of one icon url stand.
#[derive(Debug, Clone)]
struct ImageEntry {
    /// The bytes held, if any (a failed refresh keeps them).
    image: Option<Image>,
    /// When the last load or refresh finished.
    checked_at: Time,
}

/// Shared storage of the icons machine.
#[derive(Debug, Default)]
pub(crate) struct AgentIcons {
    projection: Option<Projection>,
    /// Agents the host asked icons for, in this person's and Environment's scope.
    wanted: LiteMap<String, ()>,
    /// Bytes per icon url.
    images: LiteMap<String, ImageEntry>,
    /// P14 requests in flight and their url.
    fetching: LiteMap<RequestId, String>,
    /// The handle the next new image gets.
    next_handle: u64,
    /// `Snapshot::agent_icons`, rebuilt when the projection or the bytes change: a snapshot
    /// shares it (cloning and comparing it costs nothing per publish).
    view: Arc<BTreeMap<String, AgentIcon>>,
}

pub(crate) enum IconsEvent<'a> {
    /// The host draws these Agents (possibly none: the projection alone). `environment` is the
    /// active one; `None` when no request may go (no Environment, or no platform credential).
    Request {
        environment: Option<&'a str>,
        agents: &'a [String],
    },
    /// The person or the Environment changed, or the credential went: everything is dropped.
    Reset,
    Answer(&'a Answer),
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl AgentIcons {
    #[superstate]
    fn any(&mut self, context: &mut Ctx<'_>, event: &IconsEvent<'_>) -> Outcome<State> {
        match event {
            IconsEvent::Reset => {
                for (id, _) in std::mem::take(&mut self.fetching) {
                    context.io.abort(id);
                }
                self.projection = None;
                self.wanted.clear();
                self.images.clear();
                self.rebuild_view();
                // The exit action of `loading` aborts a projection read.
                Transition(State::idle())
            }
            IconsEvent::Answer(a) => {
                self.image_answered(context.now, a);
                Handled
            }
            IconsEvent::Request { .. } => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &IconsEvent<'_>) -> Outcome<State> {
        match event {
            IconsEvent::Request {
                environment: Some(env),
                agents,
            } => {
                self.want(agents);
                if self.is_fresh(env, context.now) {
                    self.fetch_images(context, agents.iter());
                    Handled
                } else {
                    self.load(context, env, 1)
                }
            }
            _ => Super,
        }
    }

    /// A projection read is in flight for `environment` (attempt 1 or 2).
    #[state(superstate = "any", exit_action = "abort_pending")]
    #[allow(clippy::ptr_arg)] // statig hands state-local fields by reference
    fn loading(
        &mut self,
        environment: &String,
        pending: &RequestId,
        attempt: &u8,
        context: &mut Ctx<'_>,
        event: &IconsEvent<'_>,
    ) -> Outcome<State> {
        match event {
            IconsEvent::Answer(a) if a.id == *pending => {
                let read = a
                    .ok_body()
                    .and_then(|body| parse_icon_projection(body, &context.io.base));
                match read {
                    Ok(icons) => {
                        // Bytes are kept only for an address the new projection still gives
                        // (a platform that changes its icon urls cannot grow what is held).
                        self.images
                            .retain(|url, _| icons.values().any(|icon| icon.url == *url));
                        self.projection = Some(Projection {
                            environment: environment.clone(),
                            icons: Arc::new(icons),
                            loaded_at: context.now,
                        });
                        self.rebuild_view();
                        let wanted: Vec<String> = self.wanted.keys().cloned().collect();
                        self.fetch_images(context, wanted.iter());
                        Transition(State::idle())
                    }
                    // One retry at once; then every Agent keeps its fallback icon.
                    Err(_) if *attempt < 2 => {
                        let environment = environment.clone();
                        self.load(context, &environment, attempt + 1)
                    }
                    Err(_) => Transition(State::idle()),
                }
            }
            // A request while the read runs joins it: its Agents are served when it answers.
            IconsEvent::Request { agents, .. } => {
                self.want(agents);
                Handled
            }
            _ => Super,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

impl AgentIcons {
    fn is_fresh(&self, environment: &str, now: Time) -> bool {
        self.projection.as_ref().is_some_and(|p| {
            p.environment == environment
                && now.saturating_duration_since(p.loaded_at) < PROJECTION_FRESH
        })
    }

    fn want(&mut self, agents: &[String]) {
        for agent in agents {
            let agent = agent.trim();
            if !agent.is_empty()
                && (self.wanted.len() < MAX_WANTED || self.wanted.contains_key(agent))
            {
                self.wanted.insert(agent.to_owned(), ());
            }
        }
    }

    fn load(&mut self, context: &mut Ctx<'_>, environment: &str, attempt: u8) -> Outcome<State> {
        let call = ApiCall::ListAgentIcons {
            environment_uid: environment.to_owned(),
        };
        match context.send(Owner::Icons, call) {
            Ok(pending) => Transition(State::loading(environment.to_owned(), pending, attempt)),
            Err(_) => Transition(State::idle()),
        }
    }

    /// P14 for each wanted Agent the projection gives an icon, unless its bytes are in flight,
    /// fresh, or failed less than a minute ago.
    fn fetch_images<'a>(
        &mut self,
        context: &mut Ctx<'_>,
        agents: impl Iterator<Item = &'a String>,
    ) {
        let Some(projection) = self.projection.as_ref() else {
            return;
        };
        let icons = Arc::clone(&projection.icons);
        let mut sent = false;
        for agent in agents {
            let agent = agent.trim();
            if !self.wanted.contains_key(agent) {
                continue;
            }
            let Some(icon) = icons.get(agent) else {
                continue;
            };
            if self.fetching.values().any(|url| *url == icon.url) {
                continue;
            }
            let due = self.images.get(&icon.url).is_none_or(|entry| {
                let age = context.now.saturating_duration_since(entry.checked_at);
                match entry.image {
                    Some(_) => age >= IMAGE_REFRESH,
                    None => age >= IMAGE_RETRY,
                }
            });
            if !due {
                continue;
            }
            let call = ApiCall::GetAgentIcon {
                agent_uid: agent.to_owned(),
                url: icon.url.clone(),
            };
            if let Ok(id) = context.send(Owner::Icons, call) {
                self.fetching.insert(id, icon.url.clone());
                sent = true;
            }
        }
        if sent {
            self.rebuild_view();
        }
    }

    /// A P14 answer: bytes of an image type (or of no stated type), not empty and within the
    /// size limit, replace what is held; anything else keeps held bytes, or marks a failed
    /// first load.
    fn image_answered(&mut self, now: Time, answer: &Answer) {
        let Some(url) = self.fetching.remove(&answer.id) else {
            return;
        };
        let content_type = answer.content_type.as_deref();
        let etag = answer.etag.as_deref();
        let held = self.images.remove(&url).and_then(|e| e.image);
        let image = match (&answer.outcome, held) {
            (Http::Http { status, body }, held)
                if (200..300).contains(status)
                    && !body.is_empty()
                    && body.len() <= MAX_ICON_BYTES
                    && content_type.is_none_or(is_image_type) =>
            {
                match held {
                    Some(held) if held.same_fingerprint(etag, body) => Some(held),
                    _ => {
                        self.next_handle += 1;
                        Some(Image {
                            bytes: body.clone(),
                            content_type: content_type.map(str::to_owned),
                            etag: etag.map(str::to_owned),
                            handle: self.next_handle,
                        })
                    }
                }
            }
            (_, held) => held,
        };
        let entry = ImageEntry {
            image,
            checked_at: now,
        };
        self.images.insert(url, entry);
        self.rebuild_view();
    }

    /// `Snapshot::agent_icons` from the projection and the bytes held.
    fn rebuild_view(&mut self) {
        let loading: Vec<&str> = self.fetching.values().map(String::as_str).collect();
        let view = self.projection.as_ref().map(|projection| {
            projection
                .icons
                .iter()
                .map(|(uid, icon)| {
                    let entry = self.images.get(&icon.url);
                    let image = entry.and_then(|e| e.image.as_ref()).map(|i| IconImage {
                        handle: i.handle,
                        content_type: i.content_type.clone(),
                        etag: i.etag.clone(),
                        bytes: i.bytes.clone(),
                    });
                    let status = match (&image, entry) {
                        (Some(_), _) => IconStatus::Ready,
                        _ if loading.contains(&icon.url.as_str()) => IconStatus::Loading,
                        (None, Some(_)) => IconStatus::Error,
                        (None, None) => IconStatus::Idle,
                    };
                    let icon = AgentIcon {
                        rendering: icon.rendering,
                        url: icon.url.clone(),
                        status,
                        image,
                    };
                    (uid.clone(), icon)
                })
                .collect()
        });
        self.view = Arc::new(view.unwrap_or_default());
    }

    /// `Snapshot::agent_icons`, shared.
    pub(crate) fn view(&self) -> Arc<BTreeMap<String, AgentIcon>> {
        Arc::clone(&self.view)
    }
}

/// `image/*`, parameters ignored.
fn is_image_type(content_type: &str) -> bool {
    content_type
        .trim()
        .get(..6)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("image/"))
}

super::count_transitions!(AgentIcons);
