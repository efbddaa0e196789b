use rsrc::resources;

struct Notion;

#[resources]
impl Notion {
    #[resource(uri = "notion://databases/{databaseId}/rows/{rowId}")]
    fn row(&self, database_id: String) -> String {
        database_id
    }
}

fn main() {}
