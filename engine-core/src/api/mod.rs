//! Wire types of the platform API (`platform-api.md`), tolerant of unknown fields, with
//! normalization into the engine's own types and typed errors.
//!
//! Every parser takes the raw body bytes and never panics: malformed JSON, wrong types and
//! missing fields become an [`ApiError`].

mod error;
mod history;
mod insights;
mod session;

pub use error::{ApiError, Operation, error_message, model_required_fields};
pub use history::{History, HistoryStatus, parse_history};
pub use insights::{Insights, parse_insights};
pub use session::{
    SessionRecord, parse_created_session, parse_get_or_create_session, parse_session_list,
    parse_session_record,
};
