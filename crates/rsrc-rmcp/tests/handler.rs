//! `#[resource_handler]` beside methods of the impl's own: it keeps them, and for the
//! methods both sides answer, hands over what is not the engine's — prompt completion,
//! custom methods the engine does not serve — and merges the capabilities.

mod common;

use rmcp::model::{
    ArgumentInfo, ClientRequest, CompleteRequestParams, CompleteResult, CompletionInfo,
    CustomRequest, CustomResult, ErrorData, Reference, ServerCapabilities, ServerConfig,
    ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use rsrc_rmcp::{Resources, resource_handler};
use serde_json::json;

#[derive(Clone)]
struct Mine {
    resources: Resources,
}

#[resource_handler]
impl ServerHandler for Mine {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_prompts().build())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let values = vec![format!("{}!", request.argument.value)];
        Ok(CompleteResult::new(CompletionInfo::new(values).unwrap()))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Ok(CustomResult(json!({ "mine": request.method })))
    }
}

fn mine() -> Mine {
    let server = rsrc::Server::builder("mine", "1.0")
        .mount("sample:", common::sample_set())
        .build()
        .unwrap();
    Mine {
        resources: Resources::new(server),
    }
}

#[tokio::test]
async fn what_is_not_the_engines_reaches_the_impls_own_methods() {
    for era in common::ERAS {
        let (client, _) = common::rmcp_client(mine(), era).await;
        if let Some(info) = client.peer_info() {
            let caps = &info.capabilities;
            assert!(
                caps.prompts.is_some() && caps.resources.is_some(),
                "{caps:?}"
            );
        }
        let prompt = client
            .complete(CompleteRequestParams::new(
                Reference::for_prompt("greeting"),
                ArgumentInfo::new("name", "Ada"),
            ))
            .await
            .unwrap();
        assert_eq!(prompt.completion.values, ["Ada!"], "{era:?}");
        let custom = |method: &str, params| {
            client.send_request(ClientRequest::CustomRequest(CustomRequest::new(
                method, params,
            )))
        };
        let ServerResult::CustomResult(theirs) = custom("my/method", None).await.unwrap() else {
            panic!("not a custom result");
        };
        assert_eq!(theirs.0, json!({"mine": "my/method"}));
        let ServerResult::CustomResult(metadata) = custom(
            "resources/metadata",
            Some(json!({"uri": "sample:///README.md"})),
        )
        .await
        .unwrap() else {
            panic!("not a custom result");
        };
        assert_eq!(metadata.0["resource"]["title"], "Read me");
        assert_eq!(metadata.0["resource"]["resourceType"], "document");
        client.cancel().await.unwrap();
    }
}
