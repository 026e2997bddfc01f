use mcp_runtime::prelude::*;

#[resource("mem://{address}")]
unsafe fn peek(address: usize) -> Vec<u8> {
    vec![unsafe { *(address as *const u8) }]
}

fn main() {}
