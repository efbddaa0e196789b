use rsrc::resources;

struct Notion;

#[resources]
impl Notion {
    #[resource(uri = "notion://workspace/info")]
    fn info(&self) -> &'static str {
        "a"
    }

    #[resource(uri = "notion://workspace/info")]
    fn info_again(&self) -> &'static str {
        "b"
    }

    #[resource(uri = "notion://pages/{pageId}")]
    fn page(&self, page_id: String) -> String {
        page_id
    }

    // Matches exactly the URIs the template above matches.
    #[resource(uri = "notion://pages/{id}")]
    fn page_by_id(&self, id: String) -> String {
        id
    }
}

fn main() {}
