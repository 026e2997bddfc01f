#[cfg(test)]
mod tests {
    use mcp_runtime::serde_json::json;

    /// What a client sees of the tools: their names, descriptions and schemas. A renamed
    /// argument or a lost doc comment shows up here; accept a change you meant with
    /// `UPDATE_SNAPSHOTS=1 cargo test` and review the file's diff.
    #[mcp_runtime::test]
    async fn tools_list_is_unchanged() {
        let server = mcp_runtime::server!().build().unwrap();
        let client = server.connect_memory();
        client.initialize().await.unwrap();
        let tools = client.list_tools().await.unwrap();
        mcp_runtime::testing::assert_snapshot("tests/snapshots/tools_list.json", &json!(tools));
    }

    #[mcp_runtime::test]
    async fn add_answers_through_the_protocol() {
        let server = mcp_runtime::server!().build().unwrap();
        let client = server.connect_memory();
        client.initialize().await.unwrap();
        let result = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(json!(result)["content"][0]["text"], "5");
    }
}
