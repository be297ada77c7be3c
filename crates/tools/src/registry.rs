//! The tools offered to the model, by name, in a stable order.

use crate::{
    ApplyPatch, EditFile, ListDir, ReadFile, RunCommand, Search, Symbols, ToolHandler, UpdatePlan,
    WriteFile,
};
use bosun_protocol::ToolSpec;
use std::sync::Arc;

/// The tools a task may call. Specs come out in registration order, so the request the model
/// sees is byte-identical from turn to turn (good for prompt caching).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<(String, Arc<dyn ToolHandler>)>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// The nine built-in tools.
    pub fn builtin() -> Self {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(ReadFile));
        registry.register(Arc::new(ListDir));
        registry.register(Arc::new(Search));
        registry.register(Arc::new(Symbols));
        registry.register(Arc::new(WriteFile));
        registry.register(Arc::new(EditFile));
        registry.register(Arc::new(ApplyPatch));
        registry.register(Arc::new(RunCommand));
        registry.register(Arc::new(UpdatePlan));
        registry
    }

    /// Adds a tool, replacing any tool of the same name in place.
    pub fn register(&mut self, handler: Arc<dyn ToolHandler>) {
        let name = handler.spec().name;
        match self.tools.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = handler,
            None => self.tools.push((name, handler)),
        }
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn ToolHandler>> {
        self.tools
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, h)| Arc::clone(h))
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|(_, h)| h.spec()).collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|(n, _)| n.clone()).collect()
    }
}
