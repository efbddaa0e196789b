// The handler's field is not called `resources`: the error sits on the attribute and its
// type spells `#[resource_handler(resources = self.your_field)]`.
use rsrc_rmcp::rmcp::ServerHandler;
use rsrc_rmcp::{Resources, resource_handler};

#[derive(Clone)]
struct MyServer {
    engine: Resources,
}

#[resource_handler]
impl ServerHandler for MyServer {}

fn main() {
    let _ = |s: MyServer| s.engine;
}
