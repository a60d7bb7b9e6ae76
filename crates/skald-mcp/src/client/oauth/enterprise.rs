//! Enterprise-managed authorization (SEP-990, "cross-app access"): the user's sign-in at
//! their organisation's identity provider (an OIDC ID token) is exchanged there for an
//! identity assertion grant bound to this MCP server (RFC 8693), which the server's
//! authorization server redeems for an access token (RFC 7523 JWT bearer) — no consent
//! page per server. Both exchanges are rmcp's (`auth::enterprise`); this module finds the
//! endpoints, picks the client authentication the servers take, and keeps the result in
//! the owner's store like any other login.

use super::{
    Preregistered, Record, Tokens, auth_error, discover, fetch_metadata, read, safe_endpoint, write,
};
use crate::OAuth;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, CredentialStore, OAuthTokenResponse,
    StoredCredentials, WWWAuthenticateParams, default_oauth_http_client,
};
use serde::{Deserialize, Serialize};

/// The user's identity provider and what Skald holds from it, kept in the login record
/// (the store is the secrets store; `id_token` and `client_secret` are redacted by name).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Enterprise {
    /// The identity provider's issuer; its token endpoint is read from its OpenID
    /// configuration.
    pub issuer: String,
    /// Skald's client at the identity provider.
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    /// The user's ID token from the identity provider, for this client.
    pub id_token: String,
}

/// The identity provider's token endpoint, from `ISSUER/.well-known/openid-configuration`,
/// which must name the same issuer (OpenID Connect Discovery §4.3).
async fn idp_token_endpoint(issuer: &str) -> Result<String, String> {
    if !safe_endpoint(issuer) {
        return Err(format!(
            "the identity provider `{issuer}` is neither https nor on this machine"
        ));
    }
    let at = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let body = fetch_metadata(&at)
        .await?
        .ok_or_else(|| format!("the identity provider has no OpenID configuration at {at}"))?;
    #[derive(Deserialize)]
    struct Configuration {
        issuer: String,
        token_endpoint: String,
    }
    let config: Configuration = serde_json::from_slice(&body)
        .map_err(|e| format!("{at} is not an OpenID configuration: {e}"))?;
    if config.issuer != issuer {
        return Err(format!(
            "the identity provider's configuration names the issuer {}, not {issuer}; \
             Skald does not use it",
            config.issuer.chars().take(200).collect::<String>()
        ));
    }
    if !safe_endpoint(&config.token_endpoint) {
        return Err(
            "the identity provider's token endpoint is neither https nor on this machine".into(),
        );
    }
    Ok(config.token_endpoint)
}

/// How a pre-registered client authenticates at the authorization server: HTTP Basic
/// unless the server lists only `client_secret_post` (RFC 8414: Basic is the default).
fn resource_authentication(
    metadata: &AuthorizationMetadata,
    secret: Option<&str>,
) -> EmaClientAuthentication {
    let Some(secret) = secret else {
        return EmaClientAuthentication::None;
    };
    let secret = oauth2::ClientSecret::new(secret.to_string());
    let methods: Vec<&str> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(serde_json::Value::as_array)
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    if !methods.is_empty()
        && !methods.contains(&"client_secret_basic")
        && methods.contains(&"client_secret_post")
    {
        EmaClientAuthentication::ClientSecretPost(secret)
    } else {
        EmaClientAuthentication::ClientSecretBasic(secret)
    }
}

/// Whether an ID token's `exp` has passed (read without checking its signature: the
/// identity provider checks that; this only saves a request bound to fail).
pub(super) fn id_token_expired(id_token: &str) -> bool {
    use base64::Engine;
    let exp = id_token
        .split('.')
        .nth(1)
        .and_then(|p| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p.trim_end_matches('='))
                .ok()
        })
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["exp"].as_u64());
    exp.is_some_and(|exp| exp <= super::now())
}

/// What a failed exchange means for the user.
fn ema_error(e: EmaError) -> String {
    let at = |stage: EmaExchangeStage| match stage {
        EmaExchangeStage::IdentityProvider => "the identity provider",
        _ => "the server's authorization server",
    };
    match e {
        EmaError::InvalidGrant(EmaExchangeStage::IdentityProvider) => {
            "the identity provider refused the ID token (expired, or issued to another \
             client): sign in to it again and log in with the new token"
                .to_string()
        }
        EmaError::InvalidGrant(stage) => format!(
            "{} refused the identity provider's grant (invalid_grant): its administrator has \
             not allowed this access",
            at(stage)
        ),
        EmaError::InsufficientUserAuthentication(stage) => format!(
            "{} asks for a stronger sign-in at the identity provider",
            at(stage)
        ),
        EmaError::OAuthRejected {
            stage,
            status,
            code,
        } => format!("{} refused the exchange: HTTP {status}, {code}", at(stage)),
        EmaError::RequestFailed(stage) => format!("cannot reach {}", at(stage)),
        other => format!("cross-app access: {other}"),
    }
}

/// Exchanges the identity provider's ID token for tokens for the server at `url` and saves
/// them through the store. Returns the scopes granted.
pub(super) async fn exchange(
    url: &str,
    oauth: &OAuth,
    challenge: Option<&str>,
    client: &Preregistered,
    idp: &Enterprise,
) -> Result<Vec<String>, String> {
    if id_token_expired(&idp.id_token) {
        return Err(
            "the identity provider's ID token has expired: sign in to it again and log in \
             with the new token"
                .to_string(),
        );
    }
    let mut manager = AuthorizationManager::new(url).await.map_err(auth_error)?;
    let metadata = discover(&manager, url, challenge).await?;
    let issuer = metadata
        .issuer
        .clone()
        .ok_or("the server's authorization server names no issuer, which cross-app access needs")?;
    let token_endpoint = metadata.token_endpoint.clone();
    let authentication = resource_authentication(&metadata, client.client_secret.as_deref());
    manager.set_metadata(metadata);
    // What the refusal asks for, else what the metadata offers; never `offline_access`:
    // this grant gives no refresh token (the ID token is exchanged again instead).
    let wanted = challenge
        .zip(reqwest::Url::parse(url).ok())
        .and_then(|(c, base)| WWWAuthenticateParams::parse(c, &base).scope);
    let scopes: Vec<String> = manager
        .select_scopes(wanted.as_deref(), &[])
        .into_iter()
        .filter(|s| s != "offline_access")
        .collect();

    let idp_server = EmaAuthorizationServer::new(
        idp.issuer.clone(),
        idp_token_endpoint(&idp.issuer).await?,
        idp.client_id.clone(),
    )
    .with_client_authentication(match &idp.client_secret {
        Some(s) => EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(s.clone())),
        None => EmaClientAuthentication::None,
    });
    let resource_server =
        EmaAuthorizationServer::new(issuer.clone(), token_endpoint, client.client_id.clone())
            .with_client_authentication(authentication);
    let http = default_oauth_http_client().map_err(auth_error)?;
    let token =
        EmaExchangeRequest::new_with_id_token(idp_server, resource_server, url, &idp.id_token)
            .with_scopes(scopes.clone())
            .exchange(&http, &http)
            .await
            .map_err(ema_error)?;

    // Kept as rmcp keeps any token, so the transport sends it and its expiry is known;
    // built from its JSON form (RFC 6749 names) so the oauth2 types stay rmcp's.
    let mut response = serde_json::json!({
        "access_token": token.access_token.secret(),
        "token_type": "bearer",
    });
    if let Some(life) = token.expires_in {
        response["expires_in"] = life.as_secs().into();
    }
    let response: OAuthTokenResponse =
        serde_json::from_value(response).map_err(|e| format!("cross-app access: {e}"))?;
    let mut granted: Vec<String> = token.scopes.into_iter().collect();
    granted.sort();
    let credentials = StoredCredentials::new(
        client.client_id.clone(),
        Some(response),
        granted.clone(),
        Some(super::now()),
    )
    .with_issuer(Some(issuer));
    Tokens::new(oauth.store.clone(), url)
        .save(credentials)
        .await
        .map_err(auth_error)?;
    Ok(if granted.is_empty() { scopes } else { granted })
}

/// A login through the identity provider: the tokens, then the rest of the record (the
/// clients and the ID token, for asking again when the tokens run out).
pub(super) async fn login(
    url: &str,
    oauth: &OAuth,
    challenge: Option<&str>,
    client: Preregistered,
    idp: Enterprise,
) -> Result<Vec<String>, String> {
    let scopes = exchange(url, oauth, challenge, &client, &idp).await?;
    let mut saved: Record = read(&oauth.store, url).await?;
    saved.preregistered = Some(client);
    saved.enterprise = Some(idp);
    saved.challenge = None;
    saved.futile = 0;
    saved.machine = false;
    saved.client_secret = None;
    write(&oauth.store, url, &saved).await?;
    Ok(scopes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn token(claims: serde_json::Value) -> String {
        let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        format!(
            "{}.{}.sig",
            b64(br#"{"alg":"ES256"}"#),
            b64(claims.to_string().as_bytes())
        )
    }

    #[test]
    fn an_id_token_past_its_exp_is_expired_and_others_are_not() {
        let now = super::super::now();
        assert!(id_token_expired(&token(
            serde_json::json!({"exp": now - 1})
        )));
        assert!(!id_token_expired(&token(
            serde_json::json!({"exp": now + 600})
        )));
        // No `exp`, or not a JWT: the identity provider decides.
        assert!(!id_token_expired(&token(serde_json::json!({"sub": "a"}))));
        assert!(!id_token_expired("opaque"));
    }

    fn metadata(methods: Option<&[&str]>) -> AuthorizationMetadata {
        let mut m = serde_json::json!({
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
            "issuer": "https://as.example",
        });
        if let Some(methods) = methods {
            m["token_endpoint_auth_methods_supported"] = serde_json::json!(methods);
        }
        serde_json::from_value(m).unwrap()
    }

    #[test]
    fn the_client_authenticates_with_basic_unless_only_post_is_taken() {
        let name = |m: Option<&[&str]>, s: Option<&str>| {
            format!("{:?}", resource_authentication(&metadata(m), s))
        };
        assert_eq!(name(None, Some("s")), "ClientSecretBasic { .. }");
        assert_eq!(
            name(Some(&["client_secret_post"]), Some("s")),
            "ClientSecretPost { .. }"
        );
        assert_eq!(
            name(
                Some(&["client_secret_post", "client_secret_basic"]),
                Some("s")
            ),
            "ClientSecretBasic { .. }"
        );
        assert_eq!(name(Some(&["client_secret_basic"]), None), "None");
    }
}
