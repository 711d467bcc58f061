//! A host's configuration form started as an engine.

use super::Engine;
use crate::{ConfigError, HostConfig, Time};

impl HostConfig {
    /// The engine this form describes, started at `now`.
    pub fn engine(&self, now: Time) -> Result<Engine, ConfigError> {
        let config = self.config()?;
        Ok(if self.record {
            Engine::new_recording(config, now)
        } else {
            Engine::new(config, now)
        })
    }
}
