//! `skald acp`: serves the Agent Client Protocol on stdin and stdout, for an editor that
//! starts Skald as its agent (docs/acp.md).

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::{Config, DataDir};
use skald_service::{Service, ServiceConfig};

pub async fn run(data_dir: &DataDir, config: &Config, model: Option<&str>) -> u8 {
    finish("skald acp", serve(data_dir, config, model).await)
}

async fn serve(data_dir: &DataDir, config: &Config, model: Option<&str>) -> Result<u8, Fail> {
    let root = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Fail::usage(format!("cannot use the current folder: {e}")))?;
    let service = Service::start(ServiceConfig {
        data_dir: data_dir.clone(),
        root,
        config: config.clone(),
        model: model.map(str::to_string),
        tex_bundle: skald_base::tex::named_bundle(),
        file_route: skald_service::FILE_ROUTE.to_string(),
        restart: None,
        hidden_env: Vec::new(),
    })
    .map_err(Fail::failed)?;
    let served = crate::acp::serve(service.clone()).await;
    service.shutdown().await;
    served.map_err(Fail::failed)?;
    Ok(exit::OK)
}
