use bosun_protocol::{CallId, OutputStream, ToolAction};
use bosun_tools::{ToolContext, ToolError, ToolOutput, ToolRegistry};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A worktree in a temp dir, with files written from `(path, content)` pairs.
pub struct Worktree {
    pub dir: tempfile::TempDir,
    pub registry: ToolRegistry,
    pub streamed: Arc<Mutex<Vec<(OutputStream, String)>>>,
}

impl Worktree {
    pub fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let abs = dir.path().join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(abs, content).unwrap();
        }
        Worktree {
            dir,
            registry: ToolRegistry::builtin(),
            streamed: Arc::default(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn ctx(&self) -> ToolContext {
        let mut ctx = ToolContext::new(self.path(), CallId::from("call_1"));
        let streamed = Arc::clone(&self.streamed);
        ctx.output = Arc::new(move |stream, text| streamed.lock().unwrap().push((stream, text)));
        ctx
    }

    pub async fn call(&self, tool: &str, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        let handler = self.registry.get(tool).unwrap();
        handler.handle(args, &self.ctx()).await
    }

    pub async fn ok(&self, tool: &str, args: serde_json::Value) -> ToolOutput {
        match self.call(tool, args).await {
            Ok(out) => out,
            Err(e) => panic!("{tool} failed: {e}"),
        }
    }

    /// The message a failing call tells the model.
    pub async fn model_error(&self, tool: &str, args: serde_json::Value) -> String {
        match self.call(tool, args).await {
            Err(ToolError::Model(msg)) => msg,
            other => panic!("{tool}: expected a model error, got {other:?}"),
        }
    }

    pub fn action(&self, tool: &str, args: serde_json::Value) -> Result<ToolAction, ToolError> {
        self.registry.get(tool).unwrap().action(&args)
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.path().join(path)).unwrap()
    }

    pub fn exists(&self, path: &str) -> bool {
        self.path().join(path).exists()
    }
}
