use mcp_runtime::prelude::*;

struct Wrapper<T>(T);

trait Describe {
    fn describe(&self) -> String;
}

#[toolbox]
impl<T: Send + Sync + 'static> Wrapper<T> {
    /// Describes.
    #[tool]
    fn size(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

#[toolbox]
impl Describe for Wrapper<u8> {
    /// Describes.
    #[tool]
    fn describe(&self) -> String {
        format!("{}", self.0)
    }
}

#[toolbox(name = "x")]
impl Wrapper<u16> {
    /// Nothing.
    fn nothing(&self) {}
}

#[toolbox]
struct NotAnImpl;

fn main() {}
