use rsrc::resources;
use serde::Serialize;

#[derive(Serialize)]
struct Page {
    title: String,
}

struct Notion;

#[resources]
impl Notion {
    #[resource(uri = "notion://pages/{pageId}")]
    fn page(&self, page_id: String) -> Page {
        Page { title: page_id }
    }
}

fn main() {}
