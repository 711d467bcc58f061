//! Where the chat goes: the embedded simulator, or a real platform with a token.

use engine_core::Secret;
use platform_sim::{Sim, SimConfig};

use crate::args::{Args, TOKEN_ENV};

/// The platform to talk to, and who talks.
pub struct Target {
    /// The engine's platform base.
    pub base: String,
    /// The person's token (empty for a local runtime).
    pub token: Secret,
    /// The Environment.
    pub environment: String,
    /// The Agent.
    pub agent: String,
    /// The person.
    pub user: String,
    /// A local Agent runtime, when it is the target (ADR 099).
    pub local: Option<engine_core::LocalSource>,
    /// A real platform's address, when it is the target.
    platform: Option<url::Url>,
    /// The embedded simulator, when it is the target.
    sim: Option<Sim>,
}

impl Target {
    /// From the command line: `--platform` with a token, else an embedded simulator.
    pub async fn resolve(args: &Args) -> Result<Target, String> {
        if let Some(url) = &args.local {
            let name = args.agent.as_deref().unwrap_or("Local Agent");
            // A same-origin path is for hosts that serve the runtime behind their own origin;
            // a terminal has none.
            if url.trim().starts_with('/') {
                return Err(format!(
                    "--local needs the runtime's own address, such as http://127.0.0.1:8787, \
                     not a path: {url:?}"
                ));
            }
            // The engine's own refusal suggests a same-origin path too, which a terminal
            // cannot use: say what this command takes, with the person's address.
            let source = engine_core::LocalSource::new(url, name).map_err(|e| match e {
                engine_core::SourceError::BaseUrl(_) => {
                    // Only an address the next run takes is suggested.
                    let suggested = crate::failure::with_scheme(url.trim())
                        .filter(|s| engine_core::LocalSource::new(s, name).is_ok());
                    match suggested {
                        Some(suggested) => format!(
                            "--local {url:?} needs its scheme: write it as {suggested}"
                        ),
                        None => format!(
                            "--local needs the runtime's own loopback address, such as http://127.0.0.1:8787, not {url:?}"
                        ),
                    }
                }
                other => other.to_string(),
            })?;
            return Ok(Target {
                // The engine's platform base: the runtime's own address (nothing is sent to a
                // platform with a local source).
                base: source.base_url().to_owned(),
                token: Secret::new(String::new()),
                environment: String::new(),
                agent: name.to_owned(),
                user: args.user.clone().unwrap_or_default(),
                local: Some(source),
                platform: None,
                sim: None,
            });
        }
        let Some(platform) = &args.platform else {
            let mut config = SimConfig::default().with_dialect(args.dialect);
            if let Some(delay) = args.answer_delay_ms {
                config.answer_delay_ms = delay;
            }
            let token = Secret::new(config.platform_token.clone());
            let environment = args
                .environment
                .clone()
                .unwrap_or_else(|| config.environment_uid.clone());
            let user = args
                .user
                .clone()
                .unwrap_or_else(|| config.person_uid.clone());
            let agent = match &args.agent {
                Some(a) => a.clone(),
                None => config
                    .agents
                    .first()
                    .map(|a| a.uid.clone())
                    .ok_or("the simulator has no Agent")?,
            };
            let sim = Sim::start(config)
                .await
                .map_err(|e| format!("the embedded simulator did not start: {e}"))?;
            return Ok(Target {
                base: sim.url(),
                platform: None,
                token,
                environment,
                agent,
                user,
                local: None,
                sim: Some(sim),
            });
        };
        let url = crate::failure::platform_url(platform)?;
        let base = url.as_str().trim_end_matches('/').to_owned();
        let token = match &args.token_file {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?,
            None => std::env::var(TOKEN_ENV).map_err(|_| {
                format!("a platform token is needed: --token-file PATH or {TOKEN_ENV}")
            })?,
        };
        let token = token.trim().to_owned();
        if token.is_empty() {
            return Err("the platform token is empty".into());
        }
        let need = |value: &Option<String>, flag: &str| {
            value
                .clone()
                .filter(|v| !v.trim().is_empty())
                .ok_or(format!("--{flag} is needed with --platform"))
        };
        Ok(Target {
            base,
            token: Secret::new(token),
            environment: need(&args.environment, "environment")?,
            agent: need(&args.agent, "agent")?,
            user: need(&args.user, "user")?,
            local: None,
            platform: Some(url),
            sim: None,
        })
    }

    /// For a real platform: whether it answers, takes the token and knows the Environment and
    /// the Agent ([`crate::failure::Preflight`]); nothing to check otherwise.
    pub async fn check(&self, timeout: std::time::Duration) -> Result<(), crate::failure::Cause> {
        let Some(base) = &self.platform else {
            return Ok(());
        };
        crate::failure::Preflight {
            base,
            token: &self.token,
            environment: &self.environment,
            agent: &self.agent,
            user: &self.user,
            timeout,
        }
        .run()
        .await
    }

    /// For a local runtime that nothing listens for: the line to say so at once (the engine
    /// looks for the runtime again every 5 s and `send` waits for it up to `--timeout`, so it
    /// is a notice, not a failure). `None` when something answers, or for other targets.
    pub async fn local_not_listening(&self, wait_s: u64) -> Option<String> {
        let source = self.local.as_ref()?;
        let url = url::Url::parse(source.base_url()).ok()?;
        let at = format!("{}:{}", url.host_str()?, url.port_or_known_default()?);
        let probe = tokio::net::TcpStream::connect(at.as_str());
        let refused = matches!(
            tokio::time::timeout(std::time::Duration::from_secs(2), probe).await,
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused
        );
        refused.then(|| {
            format!(
                "Nothing is listening at {at} (connection refused): waiting up to {wait_s} s for {} to start (--timeout; Ctrl-C stops).",
                self.agent
            )
        })
    }

    /// The local runtime's address, when it is the target.
    pub fn local_address(&self) -> Option<&str> {
        self.local.as_ref().map(|s| s.base_url())
    }

    /// Whether the embedded simulator is the target.
    pub fn is_embedded(&self) -> bool {
        self.sim.is_some()
    }

    /// Stops the embedded simulator, if any.
    pub async fn stop(self) {
        if let Some(sim) = self.sim {
            sim.shutdown().await;
        }
    }
}
