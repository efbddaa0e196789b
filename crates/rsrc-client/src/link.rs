//! The connection under a client ([`Link`]): a byte stream or a Streamable HTTP endpoint,
//! behind one set of calls (options, notifications, request, notify).
//!
//! Invariant: the link only carries messages: every protocol decision (era, `_meta`,
//! spans) is taken above it, by the client.

use std::time::Duration;

use rsrc_protocol::RequestMeta;
use rsrc_protocol::methods::Method;

use crate::error::ClientError;
#[cfg(feature = "http")]
use crate::http;
use crate::io::{self, Notification};
use crate::options::ClientOptions;

/// The connection under a client: a byte stream, or an HTTP endpoint.
#[derive(Debug)]
pub(crate) enum Link {
    Stream(Box<io::Connection>),
    #[cfg(feature = "http")]
    Http(http::HttpLink),
}

impl Link {
    pub(crate) fn options(&self) -> &ClientOptions {
        match self {
            Link::Stream(c) => c.options(),
            #[cfg(feature = "http")]
            Link::Http(h) => h.options(),
        }
    }

    pub(crate) fn take_notifications(&self) -> Option<tokio::sync::mpsc::Receiver<Notification>> {
        match self {
            Link::Stream(c) => c.take_notifications(),
            #[cfg(feature = "http")]
            Link::Http(h) => h.take_notifications(),
        }
    }

    pub(crate) async fn request<M: Method>(
        &self,
        params: &M::Params,
        meta: Option<&RequestMeta>,
        timeout: Duration,
    ) -> Result<M::Result, ClientError> {
        match self {
            Link::Stream(c) => c.request::<M>(params, meta, timeout).await,
            #[cfg(feature = "http")]
            Link::Http(h) => h.request::<M>(params, meta, timeout).await,
        }
    }

    pub(crate) async fn notify<N: rsrc_protocol::methods::NotificationMethod>(
        &self,
        params: &N::Params,
    ) -> Result<(), ClientError> {
        match self {
            Link::Stream(c) => c.notify::<N>(params).await,
            #[cfg(feature = "http")]
            Link::Http(h) => h.notify::<N>(params).await,
        }
    }
}
