// Only `resources = <expression>` is understood.
use rsrc_rmcp::{Resources, resource_handler};

#[derive(Clone)]
struct MyServer {
    engine: Resources,
}

#[resource_handler(field = self.engine)]
impl rsrc_rmcp::rmcp::ServerHandler for MyServer {}

fn main() {}
