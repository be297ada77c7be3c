use crate::CoreError;
use crate::redaction::{Redaction, Replaced, TextStream};
use bosun_protocol::{Event, EventMsg, Redacted, TaskId};
use bosun_store::{Store, now_rfc3339};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The one place a task's events come from: it appends each to the journal (which gives it the
/// task's next seq under its write lock) and only then delivers it to the frontend. If the journal fails, the event is not delivered and
/// the failure is kept so the loop stops at its next step.
pub struct Emitter {
    task_id: TaskId,
    store: Arc<Store>,
    state: Mutex<EmitterState>,
    sink: mpsc::UnboundedSender<Event>,
    redaction: Option<Arc<Redaction>>,
}

struct EmitterState {
    seq: u64,
    failure: Option<String>,
}

impl Emitter {
    pub fn new(
        task_id: TaskId,
        store: Arc<Store>,
        last_seq: u64,
        sink: mpsc::UnboundedSender<Event>,
    ) -> Self {
        Emitter {
            task_id,
            store,
            state: Mutex::new(EmitterState {
                seq: last_seq,
                failure: None,
            }),
            sink,
            redaction: None,
        }
    }

    /// An emitter for a task whose stream no frontend follows through it (a finished task's
    /// re-run checks, the merge gate): the events go to the journal only.
    pub fn appending(task_id: TaskId, store: Arc<Store>) -> Self {
        let (sink, _) = mpsc::unbounded_channel();
        Emitter::new(task_id, store, 0, sink)
    }

    /// Redacts every event before it is journaled, and follows one that had secrets with a
    /// `redacted` event saying how many.
    pub fn with_redaction(mut self, redaction: Arc<Redaction>) -> Self {
        self.redaction = Some(redaction);
        self
    }

    /// The task's redaction, if it redacts.
    pub fn redaction(&self) -> Option<&Redaction> {
        self.redaction.as_deref()
    }

    /// Journals then delivers one event, redacted first.
    pub fn emit(&self, msg: EventMsg) -> Result<Event, CoreError> {
        self.emit_counting(msg, Replaced::default())
    }

    /// A stream of text pieces redacted as a whole, for [`Emitter::emit_piece`].
    pub fn text_stream(&self) -> TextStream {
        TextStream::new(self.redaction.clone())
    }

    /// Emits what `stream` lets out after `piece` (nothing while a line is unfinished), as the
    /// event `make` builds; `None` ends the stream and emits what it still held. Failures are
    /// remembered as with [`Emitter::emit_quietly`].
    pub fn emit_piece(
        &self,
        stream: &TextStream,
        piece: Option<&str>,
        make: impl FnOnce(String) -> EventMsg,
    ) {
        let (text, replaced) = match piece {
            Some(p) => stream.push(p),
            None => stream.finish(),
        };
        if !text.is_empty() {
            let _ = self.emit_counting(make(text), replaced);
        }
    }

    /// [`Emitter::emit`] for an event that was partly redacted already (`before`): one
    /// `redacted` event counts both.
    fn emit_counting(&self, msg: EventMsg, before: Replaced) -> Result<Event, CoreError> {
        let (msg, found) = self.redact(msg);
        let mut replaced = before;
        replaced.merge(found);
        let event = self.append(msg)?;
        if replaced.count > 0 {
            self.append(EventMsg::Redacted(Redacted {
                count: u32::try_from(replaced.count).unwrap_or(u32::MAX),
                kinds: replaced.kinds,
                place: "journal".into(),
            }))?;
        }
        Ok(event)
    }

    fn redact(&self, msg: EventMsg) -> (EventMsg, Replaced) {
        let Some(redaction) = &self.redaction else {
            return (msg, Default::default());
        };
        let Ok(mut value) = serde_json::to_value(&msg) else {
            return (msg, Default::default());
        };
        let replaced = redaction.json(&mut value);
        if replaced.count == 0 {
            return (msg, replaced);
        }
        match serde_json::from_value(value) {
            Ok(redacted) => (redacted, replaced),
            // A redaction that broke the event's shape (it cannot: only strings change) must
            // not leak the secret either.
            Err(_) => (
                EventMsg::Redacted(Redacted {
                    count: u32::try_from(replaced.count).unwrap_or(u32::MAX),
                    kinds: replaced.kinds.clone(),
                    place: "journal".into(),
                }),
                Default::default(),
            ),
        }
    }

    /// The journal the events go to.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn task_id(&self) -> &TaskId {
        &self.task_id
    }

    fn append(&self, msg: EventMsg) -> Result<Event, CoreError> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| CoreError::Internal("event emitter lock poisoned".into()))?;
        if let Some(failure) = &state.failure {
            return Err(CoreError::Internal(format!(
                "the journal failed earlier: {failure}"
            )));
        }
        // The seq is taken under the journal's write lock: a finished task's re-run checks or
        // its review may write to the same task while a follow-up starts.
        let event = match self.store.append_next(&self.task_id, now_rfc3339(), msg) {
            Ok(e) => e,
            Err(e) => {
                state.failure = Some(e.to_string());
                return Err(CoreError::Store(e));
            }
        };
        state.seq = event.seq;
        // A frontend that went away does not stop the task: the journal has the event.
        let _ = self.sink.send(event.clone());
        Ok(event)
    }

    /// For callbacks that cannot return an error (streamed deltas): the failure is remembered and
    /// reported by [`Emitter::check`].
    pub fn emit_quietly(&self, msg: EventMsg) {
        let _ = self.emit(msg);
    }

    /// Fails if an earlier emit could not be journaled.
    pub fn check(&self) -> Result<(), CoreError> {
        let state = self
            .state
            .lock()
            .map_err(|_| CoreError::Internal("event emitter lock poisoned".into()))?;
        match &state.failure {
            Some(f) => Err(CoreError::Internal(format!("the journal failed: {f}"))),
            None => Ok(()),
        }
    }
}

/// A command's streamed output: stdout and stderr each redacted as one text (see
/// [`crate::redaction::TextStream`]), each piece emitted as the event `make` builds, and what
/// the streams still hold let out by [`StreamedOutput::finish`].
pub(crate) struct StreamedOutput<F: Fn(bosun_protocol::OutputStream, String) -> EventMsg> {
    emitter: Arc<Emitter>,
    stdout: TextStream,
    stderr: TextStream,
    make: F,
}

impl<F: Fn(bosun_protocol::OutputStream, String) -> EventMsg> StreamedOutput<F> {
    pub fn new(emitter: &Arc<Emitter>, make: F) -> Self {
        StreamedOutput {
            emitter: Arc::clone(emitter),
            stdout: emitter.text_stream(),
            stderr: emitter.text_stream(),
            make,
        }
    }

    /// A piece of `stream`; `None` ends it.
    pub fn piece(&self, stream: bosun_protocol::OutputStream, piece: Option<&str>) {
        let held = match stream {
            bosun_protocol::OutputStream::Stdout => &self.stdout,
            bosun_protocol::OutputStream::Stderr => &self.stderr,
        };
        self.emitter
            .emit_piece(held, piece, |chunk| (self.make)(stream, chunk));
    }

    pub fn finish(&self) {
        self.piece(bosun_protocol::OutputStream::Stdout, None);
        self.piece(bosun_protocol::OutputStream::Stderr, None);
    }
}
