use rsrc::resources;

struct Notion;

#[resources]
impl Notion {
    #[resource(uri = "notion://pages/{pageId}")]
    fn page(&self, page_id: String) -> String {
        page_id
    }

    #[resource(uri = "notion://workspace/info")]
    fn info(&self) -> String {
        String::new()
    }

    #[complete(page, databaseId)]
    fn databases(&self) -> Vec<String> {
        Vec::new()
    }

    #[list(info)]
    fn infos(&self) -> Vec<String> {
        Vec::new()
    }
}

fn main() {}
