//! Wire types of the platform API (`platform-api.md`), tolerant of unknown fields, with
//! normalization into the engine's own types and typed errors.
//!
//! Every parser takes the raw body bytes and never panics: malformed JSON, wrong types and
//! missing fields become an [`ApiError`].

mod catalog;
pub(crate) mod chat;
mod error;
mod history;
mod icons;
mod insights;
pub mod local;
mod provenance;
mod runtime;
mod session;

pub use catalog::{
    Catalog, CatalogModel, CatalogProvider, ConfiguredCredential, CredentialStatus, EffortOption,
    MAX_CREDENTIALS, MAX_LIST_ITEMS, MAX_MODELS, MAX_PROVIDERS, MAX_STRING_BYTES, ModelChoice,
    ModelOption, ProviderOption, Resolved, ThinkingLevel, catalog_signature, missing_model_notice,
    parse_catalog, pick_default_session_model, resolve_selection,
};
pub use error::{
    ApiError, FailedCall, Operation, error_message, model_required_fields, server_message,
};
pub use history::{History, HistoryStatus, parse_history};
pub(crate) use icons::icon_address;
pub use icons::{
    IconRendering, MAX_ICON_URL_BYTES, MAX_PROJECTED_ICONS, ProjectedIcon, parse_icon_projection,
};
pub use insights::{Insights, InsightsSnapshot, InsightsValue, parse_insights};
pub(crate) use provenance::id_like;
pub use provenance::{PROVENANCE_PART_TYPE, normalize_provenance, provenance_metadata};
pub(crate) use runtime::rpc_url_of;
pub use runtime::{
    AccessMode, InteractionState, PresencePhase, RuntimeAccess, RuntimeEndpoint,
    RuntimeInteraction, RuntimeNotice, RuntimePresence, Severity, Wake, parse_runtime_access,
};
pub use session::{
    SessionRecord, parse_created_session, parse_get_or_create_session, parse_session_list,
    parse_session_list_in, parse_session_record,
};
