//! The answer followed: stream deltas handed to the host and read into the run status
//! (adr-notes 6 and 8), and the end an `error` frame makes (RU-15).

use super::*;

impl Run {
    /// Hands stream deltas to the host and follows them in the run status.
    pub(super) fn relay(&mut self, context: &mut WorkCtx<'_>, deltas: Vec<StreamDelta>) {
        if deltas.is_empty() {
            return;
        }
        self.answer_revision = self.answer_revision.wrapping_add(1);
        // A reasoning delta may join several frames: the summary is the last frame's text
        // that was not blank, which the stream keeps.
        let summary = deltas
            .iter()
            .any(|d| matches!(d, StreamDelta::ReasoningDelta { .. }))
            .then(|| {
                self.answer
                    .as_deref()
                    .map(|a| a.last_reasoning().to_owned())
            })
            .flatten();
        for delta in deltas {
            self.follow(&delta, summary.as_deref());
            context.emit(Event::Answer {
                session_uid: self.session_uid.clone(),
                delta,
            });
        }
    }

    /// adr-notes 6 and 8: the run status follows the answer chunk by chunk. Only a change of
    /// status or detail writes anything. `last_reasoning`: the trimmed text of the last
    /// reasoning frame that was not blank, the thinking summary a reasoning delta that is not
    /// blank leaves (the delta may join several frames; the status is read after them all).
    pub(super) fn follow(&mut self, delta: &StreamDelta, last_reasoning: Option<&str>) {
        match delta {
            StreamDelta::ReasoningDelta { delta, .. } => {
                self.update(RunStatus::Thinking, THINKING_TEXT);
                self.shows_output();
                let trimmed = delta.trim();
                let summary = last_reasoning.unwrap_or(trimmed);
                if !trimmed.is_empty() && self.thinking_summary.as_deref() != Some(summary) {
                    self.summarize(Some(summary.to_owned()));
                }
            }
            StreamDelta::TextDelta { .. } => {
                self.update(RunStatus::Responding, WRITING_TEXT);
                self.summarize(None);
                self.shows_output();
            }
            // RU-8 to RU-12: a tool frame names the running tool, its result goes back to
            // thinking.
            StreamDelta::ToolStatus { line: Some(line) } => {
                self.update(RunStatus::Thinking, line);
                self.summarize(Some(line.clone()));
                self.shows_output();
            }
            StreamDelta::ToolStatus { line: None } => {
                self.update(RunStatus::Thinking, THINKING_TEXT);
                self.summarize(None);
            }
            StreamDelta::Error { error_text } => {
                self.touch();
                self.status = RunStatus::Error;
                self.detail = Some(error_text.clone());
                self.failure = Some(RunFailure::new(FailureCode::StreamError, error_text));
            }
            _ => {}
        }
    }

    /// Sets the status and detail when they differ from what is shown. After an `error` frame
    /// the error stays shown, whatever streams after it (the turn fails at its end).
    pub(super) fn update(&mut self, status: RunStatus, detail: &str) {
        if self.status == RunStatus::Error && self.failure.is_some() {
            return;
        }
        if self.status != status || self.detail.as_deref() != Some(detail) {
            self.set_status(status, Some(detail));
        }
    }

    /// RU-15: the turn failed by an `error` frame: its text (the runtime's default when the
    /// frame gave none) from the frame's source, else "Receiving the Agent's reply".
    pub(super) fn error_frame(&self, error_text: &str) -> RunEnd {
        let answer = self.answer.as_deref();
        // RU-5: a stream broken by its frames fails as the reference's decoder throws, labelled
        // "Request was never sent" (inferred there).
        if answer.is_some_and(AnswerStream::broken) {
            return failed(
                FailureCode::StreamError,
                FailureSource::NOT_SENT,
                error_text,
            );
        }
        let source = answer
            .and_then(AnswerStream::error_source)
            .map_or(FailureSource::RECEIVING, FailureSource::new);
        let message = match error_text {
            crate::stream::chunk::DEFAULT_ERROR_TEXT => RUNTIME_ERROR_TEXT,
            text => text,
        };
        failed(FailureCode::StreamError, source, message)
    }

    /// The failure text of an answer that did not finish.
    pub(super) fn answer_error(&self) -> String {
        match self.answer.as_ref().map(|a| &a.message().status) {
            Some(MessageStatus::Failed { error }) => error.clone(),
            _ => crate::stream::INTERRUPTED_TEXT.to_owned(),
        }
    }
}
