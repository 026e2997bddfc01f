use std::sync::Mutex;

use mcp_runtime::prelude::*;

struct Todo {
    items: Mutex<Vec<String>>,
}

struct Clock;

#[toolbox]
impl Todo {
    /// Add an item.
    #[tool(annotations(idempotent))]
    fn add(
        &self,
        /// The item.
        item: String,
        #[default = 1] times: usize,
    ) -> usize {
        let mut items = self.items.lock().unwrap();
        for _ in 0..times {
            items.push(item.clone());
        }
        items.len()
    }

    /// Every item, after a word to the client.
    #[mcp_runtime::tool(name = "all_items")]
    async fn all(&self, ctx: Context, clock: State<Clock>) -> Json<Vec<String>> {
        let _ = clock;
        ctx.info("listing").await;
        Json(self.items.lock().unwrap().clone())
    }

    /// A tool that needs no `self`.
    #[tool]
    fn version() -> &'static str {
        "1"
    }

    /// An ordinary method.
    fn len(&self) -> usize {
        self.items.lock().unwrap().len()
    }
}

fn main() {
    let server = mcp_runtime::server!()
        .auto_register(false)
        .toolbox(Todo {
            items: Mutex::new(Vec::new()),
        })
        .state(Clock)
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["add", "all_items", "version"]);
    assert_eq!(server.state::<Todo>().unwrap().len(), 0);
    // The methods stay ordinary methods.
    let todo = Todo {
        items: Mutex::new(Vec::new()),
    };
    assert_eq!(todo.add("x".into(), 2), 2);
    assert_eq!(Todo::version(), "1");
}
