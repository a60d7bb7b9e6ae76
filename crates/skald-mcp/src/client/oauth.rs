//! OAuth 2.1 for streamable HTTP servers (the MCP authorization spec) on rmcp's `auth`
//! module: discovery from the server's 401 (protected resource metadata, then the
//! authorization server's), a client ID metadata document or dynamic registration (or a
//! client registered by hand), authorization code with PKCE in the system browser through
//! a loopback redirect, and tokens kept in the owner's [`TokenStore`] — refreshed by rmcp
//! before they expire and once on a 401, without restarting anything.
//!
//! Logging in is always the user's act (`skald mcp login`, the app's Sign in): a server
//! that needs it is parked as `needs login`, with the refusal it gave kept for the login
//! to answer (its scopes, for a step-up), and never opens a browser by itself.

use crate::{OAuth, TokenStore};
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialRefreshGuard, CredentialStore,
    JwtSigningAlgorithm, OAuthClientConfig, StoredCredentials, WWWAuthenticateParams,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod enterprise;
pub(crate) use enterprise::Enterprise;

/// What Skald keeps for one server, as JSON in the owner's store. rmcp's own record holds
/// the client ID and tokens; the rest is what it does not keep.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The server the login is for. A record for another address is not used: a name
    /// re-pointed elsewhere must not carry its tokens, registration or secret there.
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    credentials: Option<StoredCredentials>,
    /// The secret of a dynamically registered confidential client, needed to refresh.
    #[serde(default)]
    client_secret: Option<String>,
    /// A client registered with the authorization server by hand (`--client-id`).
    #[serde(default)]
    preregistered: Option<Preregistered>,
    /// The server's last refusal (`WWW-Authenticate`), which the next login answers.
    #[serde(default)]
    challenge: Option<String>,
    /// Logins in a row that answered a refusal for access already granted.
    #[serde(default)]
    futile: u32,
    /// The tokens come from the client credentials grant (no person, no refresh token):
    /// they are asked for again when they run out or are refused.
    #[serde(default)]
    machine: bool,
    /// The tokens come from the user's identity provider (cross-app access): its ID token
    /// is exchanged again when they run out or are refused.
    #[serde(default)]
    enterprise: Option<Enterprise>,
}

/// A client registered with the authorization server by hand: its ID and a secret, or a
/// private key for `private_key_jwt` (machine-to-machine, SEP-1046).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Preregistered {
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    /// A PEM private key (RSA or EC) and its algorithm (RS256, RS384, RS512, ES256, ES384).
    #[serde(default)]
    pub private_key: Option<String>,
    #[serde(default)]
    pub signing_algorithm: Option<String>,
}

/// The client credentials grant for a pre-registered client, with a manager of its own
/// for the server at `url`: no browser, no person; the tokens are saved through the store.
/// Run on a blocking thread of the runtime because rmcp's exchange future, which signs
/// JWTs with a non-`Sync` key loader inside, cannot move between the runtime's threads.
async fn machine_login(
    url: &str,
    oauth: &OAuth,
    challenge: Option<String>,
    client: Preregistered,
) -> Result<Vec<String>, String> {
    let (url, store) = (url.to_string(), oauth.store.clone());
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        handle.block_on(async move {
            let mut manager = AuthorizationManager::new(url.as_str())
                .await
                .map_err(auth_error)?;
            manager.set_credential_store(Tokens::new(store, &url));
            manager.set_metadata(discover(&manager, &url, challenge.as_deref()).await?);
            machine_tokens(&mut manager, &url, &client).await
        })
    })
    .await
    .map_err(|e| format!("the client credentials grant stopped: {e}"))?
}

/// The client credentials grant itself (see `machine_login`).
async fn machine_tokens(
    manager: &mut AuthorizationManager,
    url: &str,
    client: &Preregistered,
) -> Result<Vec<String>, String> {
    let scopes = manager.select_scopes(None, &[]);
    // The MCP auth spec asks for the resource indicator in every token request.
    let resource = Some(url.to_string());
    let config = match (&client.private_key, &client.client_secret) {
        (Some(pem), _) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id: client.client_id.clone(),
            signing_key: pem.as_bytes().to_vec(),
            signing_algorithm: match client.signing_algorithm.as_deref().unwrap_or("RS256") {
                "RS256" => JwtSigningAlgorithm::RS256,
                "RS384" => JwtSigningAlgorithm::RS384,
                "RS512" => JwtSigningAlgorithm::RS512,
                "ES256" => JwtSigningAlgorithm::ES256,
                "ES384" => JwtSigningAlgorithm::ES384,
                other => {
                    return Err(format!(
                        "`{other}` is not a signing algorithm Skald uses: RS256, RS384, RS512, ES256 or ES384"
                    ));
                }
            },
            token_endpoint_audience: None,
            scopes: scopes.clone(),
            resource,
        },
        (None, Some(secret)) => ClientCredentialsConfig::ClientSecret {
            client_id: client.client_id.clone(),
            client_secret: secret.clone(),
            scopes: scopes.clone(),
            resource,
        },
        (None, None) => {
            return Err(
                "the client credentials grant needs the client's secret (--client-secret-env) \
                 or private key (--private-key-file)"
                    .to_string(),
            );
        }
    };
    manager
        .validate_client_credentials_metadata(&config)
        .map_err(auth_error)?;
    manager
        .configure_client_credentials(&config)
        .map_err(auth_error)?;
    manager
        .exchange_client_credentials(&config)
        .await
        .map_err(auth_error)?;
    Ok(scopes)
}

/// Whether the authorization server lists only the client credentials grant.
fn machine_only(metadata: &AuthorizationMetadata) -> bool {
    let grants: Vec<&str> = metadata
        .additional_fields
        .get("grant_types_supported")
        .and_then(serde_json::Value::as_array)
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    grants.contains(&"client_credentials") && !grants.contains(&"authorization_code")
}

/// Seconds since the Unix epoch, as token lifetimes are counted.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Whether a token is past its lifetime, or within `margin` seconds of its end.
fn expired(record: &Record, margin: u64) -> bool {
    let Some(creds) = &record.credentials else {
        return true;
    };
    let Some(tokens) = &creds.token_response else {
        return true;
    };
    // Read through its JSON form (RFC 6749 field names): the oauth2 crate stays rmcp's.
    let tokens = serde_json::to_value(tokens).unwrap_or_default();
    match (tokens["expires_in"].as_u64(), creds.token_received_at) {
        // A short-lived token is not renewed for most of its life.
        (Some(life), Some(at)) => {
            at.saturating_add(life) <= now().saturating_add(margin.min(life / 4))
        }
        _ => false,
    }
}

/// Gets new tokens for a login that can without a person — a machine one (client
/// credentials) or an enterprise one whose ID token is still valid — answering the refusal
/// kept, if any. False: this login cannot.
async fn renew(url: &str, oauth: &OAuth, record: &Record) -> Result<bool, String> {
    let challenge = record.challenge.clone();
    match (&record.enterprise, &record.preregistered) {
        (Some(idp), Some(client)) if !enterprise::id_token_expired(&idp.id_token) => {
            enterprise::exchange(url, oauth, challenge.as_deref(), client, idp).await?;
        }
        (None, Some(client)) if record.machine => {
            machine_login(url, oauth, challenge, client.clone()).await?;
        }
        _ => return Ok(false),
    }
    let mut renewed = read(&oauth.store, url).await?;
    renewed.challenge = None;
    write(&oauth.store, url, &renewed).await?;
    Ok(true)
}

/// Whether a login gets new tokens by itself (see `renew`).
fn renews_itself(record: &Record) -> bool {
    match (&record.enterprise, &record.preregistered) {
        (Some(idp), Some(_)) => !enterprise::id_token_expired(&idp.id_token),
        (None, Some(_)) => record.machine,
        _ => false,
    }
}

/// Whether a server's login gets new tokens without a person (client credentials, or an
/// enterprise ID token still valid).
pub(crate) async fn renews_by_itself(url: &str, oauth: &OAuth) -> bool {
    read(&oauth.store, url)
        .await
        .is_ok_and(|r| renews_itself(&r))
}

/// A refusal asking again for access the server has already granted is answered once
/// more (the grant may not have reached it); after that the login says so instead of
/// sending the user round the same loop.
const FUTILE_LOGINS: u32 = 1;

/// How long a login waits for the browser to come back.
pub const LOGIN_WAIT: Duration = Duration::from_secs(300);

/// The record kept for the server at `url` (an empty one when what is kept is for
/// another address).
async fn read(store: &Arc<dyn TokenStore>, url: &str) -> Result<Record, String> {
    let record = read_any(store).await?;
    Ok(if record.url.as_deref() == Some(url) {
        record
    } else {
        Record::default()
    })
}

async fn read_any(store: &Arc<dyn TokenStore>) -> Result<Record, String> {
    let store = store.clone();
    let text = tokio::task::spawn_blocking(move || store.load())
        .await
        .map_err(|e| format!("reading the saved login failed: {e}"))??;
    match text {
        None => Ok(Record::default()),
        Some(t) => serde_json::from_str(&t).map_err(|e| {
            format!("the saved login cannot be read ({e}); `skald mcp logout` forgets it")
        }),
    }
}

async fn write(store: &Arc<dyn TokenStore>, url: &str, record: &Record) -> Result<(), String> {
    let mut record = record.clone();
    record.url = Some(url.to_string());
    let text = serde_json::to_string(&record).map_err(|e| e.to_string())?;
    let store = store.clone();
    tokio::task::spawn_blocking(move || store.save(&text))
        .await
        .map_err(|e| format!("saving the login failed: {e}"))?
}

/// A login that renews itself does so this many seconds before its token runs out.
const RENEW_BEFORE: u64 = 30;

/// How long rmcp's view of the store trusts what it read: the token is read before every
/// request, and the keyring is not to be asked each time; but another process (a login, a
/// logout, a refresh by `skald mcp list`) may have changed it meanwhile.
const CACHE_FOR: Duration = Duration::from_secs(2);

/// rmcp's view of the store, for the server at `url`: its credentials inside our record.
struct Tokens {
    store: Arc<dyn TokenStore>,
    url: String,
    cache: tokio::sync::Mutex<Option<(std::time::Instant, Record)>>,
    /// For a connection's client: a login that can renew itself (see `renew`) does so
    /// when its token is about to run out, before the request that would be refused.
    renewing: Option<OAuth>,
}

impl Tokens {
    fn new(store: Arc<dyn TokenStore>, url: &str) -> Self {
        Tokens {
            store,
            url: url.to_string(),
            cache: tokio::sync::Mutex::new(None),
            renewing: None,
        }
    }

    fn renewing(oauth: &OAuth, url: &str) -> Self {
        Tokens {
            renewing: Some(oauth.clone()),
            ..Tokens::new(oauth.store.clone(), url)
        }
    }

    async fn update(&self, f: impl FnOnce(&mut Record)) -> Result<(), AuthError> {
        let mut cache = self.cache.lock().await;
        let mut record = read(&self.store, &self.url)
            .await
            .map_err(AuthError::CredentialStoreError)?;
        f(&mut record);
        write(&self.store, &self.url, &record)
            .await
            .map_err(AuthError::CredentialStoreError)?;
        *cache = Some((std::time::Instant::now(), record));
        Ok(())
    }
}

#[async_trait::async_trait]
impl CredentialStore for Tokens {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let mut cache = self.cache.lock().await;
        let fresh = cache
            .as_ref()
            .is_some_and(|(at, _)| at.elapsed() < CACHE_FOR);
        if !fresh {
            let mut record = read(&self.store, &self.url)
                .await
                .map_err(AuthError::CredentialStoreError)?;
            if let Some(oauth) = &self.renewing
                && expired(&record, RENEW_BEFORE)
                && renews_itself(&record)
            {
                // Under the cache's lock: concurrent requests wait for one renewal.
                match renew(&self.url, oauth, &record).await {
                    Ok(_) => {
                        record = read(&self.store, &self.url)
                            .await
                            .map_err(AuthError::CredentialStoreError)?;
                    }
                    Err(e) => tracing::warn!("renewing the MCP login failed: {e}"),
                }
            }
            *cache = Some((std::time::Instant::now(), record));
        }
        Ok(cache.as_ref().and_then(|(_, r)| r.credentials.clone()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.update(|r| r.credentials = Some(credentials)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.update(|r| r.credentials = None).await
    }

    /// rmcp holds this from reading the refresh token to saving its successor: another
    /// process refreshing the same login waits, then reads the new one (the cache is
    /// dropped so the load after this sees it) instead of spending the old one twice.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let store = self.store.clone();
        let held = tokio::task::spawn_blocking(move || store.hold())
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(AuthError::CredentialStoreError)?;
        *self.cache.lock().await = None;
        Ok(held.map(CredentialRefreshGuard::new))
    }
}

fn auth_error(e: AuthError) -> String {
    format!("OAuth: {e}")
}

/// Most bytes of authorization server metadata read (as rmcp's own limit).
const METADATA_MAX: usize = 1024 * 1024;

/// The authorization server's metadata for the server at `url`, found as rmcp finds it
/// (from the refusal's `resource_metadata`, then the well-known locations), with one
/// allowance: a server of the 2025-03-26 spec publishes its metadata at its origin's root
/// while naming an issuer under a path of that same origin, where its endpoints live.
/// RFC 8414's issuer check is there against a mix-up between authorization servers; an
/// issuer on the MCP server's own origin is the same party, so that metadata is taken.
/// Every other mismatch is refused.
async fn discover(
    manager: &AuthorizationManager,
    url: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, String> {
    let metadata = discover_any(manager, url, challenge).await?;
    // The browser is sent to the authorization endpoint and secrets go to the others:
    // only over TLS, or to this machine.
    for (what, endpoint) in [
        (
            "authorization",
            Some(metadata.authorization_endpoint.as_str()),
        ),
        ("token", Some(metadata.token_endpoint.as_str())),
        ("registration", metadata.registration_endpoint.as_deref()),
    ] {
        if let Some(e) = endpoint
            && !safe_endpoint(e)
        {
            return Err(format!(
                "OAuth: the authorization server's {what} endpoint `{}` is neither https nor \
                 on this machine; Skald does not use it",
                e.chars().take(200).collect::<String>()
            ));
        }
    }
    Ok(metadata)
}

/// An https URL, or an http one on this machine (`localhost`, 127.0.0.0/8, `::1`).
fn safe_endpoint(u: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(u) else {
        return false;
    };
    let host = u.host_str().unwrap_or("");
    match u.scheme() {
        "https" => !host.is_empty(),
        "http" => {
            host.eq_ignore_ascii_case("localhost")
                || host
                    .trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

async fn discover_any(
    manager: &AuthorizationManager,
    url: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, String> {
    let (expected, received) = match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(found) => return Ok(found.metadata),
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) => (expected_issuer, received_issuer),
        Err(e) => return Err(auth_error(e)),
    };
    let refused = || {
        format!(
            "OAuth: the authorization server's metadata names the issuer {received}, not \
             {expected} where it was found; Skald does not use it (RFC 8414 issuer check)"
        )
    };
    let parse = |u: &str| reqwest::Url::parse(u).map_err(|_| refused());
    let (base, expected_url, received_url) = (parse(url)?, parse(&expected)?, parse(&received)?);
    let at_root = matches!(expected_url.path(), "" | "/");
    if !at_root || expected_url.origin() != base.origin() || received_url.origin() != base.origin()
    {
        return Err(refused());
    }
    let mut at = base.clone();
    at.set_path("/.well-known/oauth-authorization-server");
    at.set_query(None);
    at.set_fragment(None);
    let Some(body) = fetch_metadata(at.as_str()).await? else {
        return Err(refused());
    };
    let metadata: AuthorizationMetadata =
        serde_json::from_slice(&body).map_err(|e| format!("OAuth: {at} is not metadata: {e}"))?;
    if metadata.issuer.as_deref() != Some(received.as_str()) {
        return Err(refused());
    }
    // Its endpoints must be on that origin too: the allowance is for one party only.
    let same_origin = |u: &str| reqwest::Url::parse(u).is_ok_and(|u| u.origin() == base.origin());
    if !same_origin(&metadata.authorization_endpoint)
        || !same_origin(&metadata.token_endpoint)
        || !metadata
            .registration_endpoint
            .as_deref()
            .is_none_or(same_origin)
    {
        return Err(refused());
    }
    Ok(metadata)
}

/// A metadata document's bytes (`None`: the server answered other than 200), read
/// without following redirects, within 30 s and `METADATA_MAX` bytes.
async fn fetch_metadata(at: &str) -> Result<Option<Vec<u8>>, String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let mut response = http
        .get(at)
        .send()
        .await
        .map_err(|e| format!("OAuth: cannot read {at}: {e}"))?;
    if !response.status().is_success() {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("OAuth: cannot read {at}: {e}"))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > METADATA_MAX {
            return Err(format!("OAuth: {at} is larger than {METADATA_MAX} bytes"));
        }
    }
    Ok(Some(body))
}

/// A server that needs a login: what to show and what the login will ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoginNeeded {
    pub expired: bool,
    pub scope: Option<String>,
}

/// The authorizing HTTP client for a server: tokens from the store when there are any
/// (with the authorization server's metadata found again, for refreshing), none
/// otherwise, so the server's first 401 says what it wants.
pub(crate) async fn http_client(
    url: &str,
    oauth: &OAuth,
) -> Result<AuthClient<reqwest::Client>, String> {
    let mut manager = AuthorizationManager::new(url).await.map_err(auth_error)?;
    let record = read(&oauth.store, url).await?;
    manager.set_credential_store(Tokens::renewing(oauth, url));
    let mut has_tokens = record
        .credentials
        .as_ref()
        .is_some_and(|c| c.token_response.is_some());
    // A machine or enterprise login asks for new tokens itself: when they ran out or were
    // refused.
    if (expired(&record, 0) || record.challenge.is_some()) && renew(url, oauth, &record).await? {
        has_tokens = true;
    }
    if has_tokens {
        // Found here rather than by `initialize_from_store`, for `discover`'s allowance.
        manager.set_metadata(discover(&manager, url, None).await?);
    }
    if has_tokens && manager.initialize_from_store().await.map_err(auth_error)? {
        let secret = record.client_secret.clone().or_else(|| {
            record
                .preregistered
                .as_ref()
                .and_then(|p| p.client_secret.clone())
        });
        if let (Some(secret), Some(creds)) = (secret, &record.credentials) {
            manager
                .configure_client(
                    OAuthClientConfig::new(creds.client_id.clone(), url).with_client_secret(secret),
                )
                .map_err(auth_error)?;
        }
    }
    Ok(AuthClient::new(reqwest::Client::new(), manager))
}

/// Keeps a server's refusal for the next login and says what the server needs.
pub(crate) async fn refused(url: &str, oauth: &OAuth, challenge: &str) -> LoginNeeded {
    let mut had_tokens = false;
    let saved = async {
        let mut record = read(&oauth.store, url).await?;
        had_tokens = has_tokens(&record);
        record.challenge = Some(challenge.to_string());
        write(&oauth.store, url, &record).await
    }
    .await;
    if let Err(e) = saved {
        tracing::warn!("cannot keep the server's refusal for the next login: {e}");
    }
    needed(url, challenge, had_tokens)
}

/// What the refusal kept for a server asks for (a server refused for a reason the
/// store no longer says: a login).
pub(crate) async fn pending(url: &str, oauth: &OAuth) -> LoginNeeded {
    match read(&oauth.store, url).await {
        Ok(record) => match &record.challenge {
            Some(c) => needed(url, c, has_tokens(&record)),
            None => LoginNeeded {
                expired: has_tokens(&record),
                scope: None,
            },
        },
        Err(_) => LoginNeeded {
            expired: false,
            scope: None,
        },
    }
}

fn has_tokens(record: &Record) -> bool {
    record
        .credentials
        .as_ref()
        .is_some_and(|c| c.token_response.is_some())
}

fn needed(url: &str, challenge: &str, had_tokens: bool) -> LoginNeeded {
    let params = reqwest::Url::parse(url)
        .map(|base| WWWAuthenticateParams::parse(challenge, &base))
        .unwrap_or_default();
    if params.is_insufficient_scope() {
        LoginNeeded {
            expired: false,
            // The server's words reach chats' contexts through the status: kept short.
            scope: params.scope.map(|s| s.chars().take(200).collect()),
        }
    } else {
        LoginNeeded {
            expired: had_tokens,
            scope: None,
        }
    }
}

/// The stored login's text as it is now, to notice a login landing (from this process or
/// another: `skald mcp login` while the app runs).
pub(crate) async fn snapshot(oauth: &OAuth) -> Option<String> {
    let store = oauth.store.clone();
    tokio::task::spawn_blocking(move || store.load().ok().flatten())
        .await
        .ok()
        .flatten()
}

/// What the saved login says without asking the server (`skald doctor`).
pub(crate) async fn state(url: &str, oauth: &OAuth) -> Result<crate::LoginState, String> {
    let record = read(&oauth.store, url).await?;
    if let Some(c) = &record.challenge {
        let need = needed(url, c, has_tokens(&record));
        return Ok(crate::LoginState::Needs(crate::Status::NeedsLogin {
            expired: need.expired,
            scope: need.scope,
        }));
    }
    let Some(tokens) = record
        .credentials
        .as_ref()
        .and_then(|c| c.token_response.as_ref())
    else {
        return Ok(crate::LoginState::NotSignedIn);
    };
    // Read through its JSON form (RFC 6749 field names): the oauth2 crate stays rmcp's.
    let tokens = serde_json::to_value(tokens).unwrap_or_default();
    let received = record
        .credentials
        .as_ref()
        .and_then(|c| c.token_received_at);
    let expired = match (tokens["expires_in"].as_u64(), received) {
        (Some(life), Some(at)) => at.saturating_add(life) <= now(),
        _ => false,
    };
    // An expired token is renewed at the next request when there is a refresh token, a
    // client secret or key (machine), or an ID token still valid (enterprise).
    let renewable = tokens["refresh_token"].as_str().is_some() || renews_itself(&record);
    if expired && !renewable {
        return Ok(crate::LoginState::Needs(crate::Status::NeedsLogin {
            expired: true,
            scope: None,
        }));
    }
    Ok(crate::LoginState::SignedIn {
        scopes: record
            .credentials
            .map(|c| c.granted_scopes)
            .unwrap_or_default(),
    })
}

/// Whether a refusal is kept, so a login knows what to answer without asking the server.
pub(crate) async fn has_refusal(url: &str, oauth: &OAuth) -> Result<bool, String> {
    Ok(read(&oauth.store, url).await?.challenge.is_some())
}

/// Forgets a server's login: tokens, registration and the refusal kept.
pub(crate) async fn logout(oauth: &OAuth) -> Result<bool, String> {
    let store = oauth.store.clone();
    let had = tokio::task::spawn_blocking(move || -> Result<bool, String> {
        let had = store.load()?.is_some();
        store.clear()?;
        Ok(had)
    })
    .await
    .map_err(|e| e.to_string())??;
    Ok(had)
}

/// What a login did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedIn {
    /// The scopes asked for (empty: the server defines none).
    pub scopes: Vec<String>,
    /// How the client identified itself: "registered", "metadata document", "pre-registered".
    pub client: &'static str,
}

/// How many logins in a row, this one included, answer a refusal for access the server
/// already granted — or why this one is not worth making: the server asks for scopes it
/// has given and refuses anyway, and only its administrator can change that.
fn futile(record: &Record, refusal: Option<&WWWAuthenticateParams>) -> Result<u32, String> {
    let granted = record
        .credentials
        .as_ref()
        .map(|c| c.granted_scopes.clone())
        .unwrap_or_default();
    let wanted: Vec<String> = refusal
        .and_then(|p| p.scope.as_deref())
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let repeat = refusal.is_some_and(WWWAuthenticateParams::is_insufficient_scope)
        && !granted.is_empty()
        && wanted.iter().all(|s| granted.contains(s));
    if !repeat {
        return Ok(0);
    }
    if record.futile >= FUTILE_LOGINS {
        return Err(format!(
            "the server refused again with the access it asked for already granted ({}); \
             logging in once more would not change that — ask its administrator what this \
             account is missing",
            wanted.join(" ")
        ));
    }
    Ok(record.futile + 1)
}

/// The browser-based login, answering the refusal kept for the server (none: discovery
/// starts from the server's well-known metadata). `open` shows the authorization page
/// (the system browser); the login then waits, at most `wait`, for the authorization
/// server to send the browser back to a loopback port.
pub(crate) async fn login(
    url: &str,
    oauth: &OAuth,
    client: Option<Preregistered>,
    idp: Option<Enterprise>,
    open: &(dyn Fn(&str) + Send + Sync),
    wait: Duration,
) -> Result<LoggedIn, String> {
    let mut record = read(&oauth.store, url).await?;
    if let Some(c) = client {
        record.preregistered = Some(c);
    }
    if let Some(idp) = idp.or(record.enterprise.clone()) {
        let client = record.preregistered.clone().ok_or(
            "cross-app access needs Skald's client at the server's authorization server: \
             give --client-id (and --client-secret-env)",
        )?;
        let scopes =
            enterprise::login(url, oauth, record.challenge.as_deref(), client, idp).await?;
        return Ok(LoggedIn {
            scopes,
            client: "identity provider",
        });
    }
    let challenge = record.challenge.clone();
    let base = reqwest::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    let params = challenge
        .as_deref()
        .map(|c| WWWAuthenticateParams::parse(c, &base));

    record.futile = futile(&record, params.as_ref())?;

    let mut manager = AuthorizationManager::new(url).await.map_err(auth_error)?;
    manager.set_credential_store(Tokens::new(oauth.store.clone(), url));
    let metadata = discover(&manager, url, challenge.as_deref()).await?;
    if machine_only(&metadata)
        || record
            .preregistered
            .as_ref()
            .is_some_and(|p| p.private_key.is_some())
    {
        let client = record.preregistered.clone().ok_or(
            "the authorization server takes only the client credentials grant \
             (machine-to-machine): give --client-id with --client-secret-env or \
             --private-key-file",
        )?;
        let scopes = machine_login(url, oauth, challenge.clone(), client.clone()).await?;
        let mut saved = read(&oauth.store, url).await?;
        saved.preregistered = Some(client);
        saved.challenge = None;
        saved.futile = 0;
        saved.machine = true;
        saved.client_secret = None;
        write(&oauth.store, url, &saved).await?;
        return Ok(LoggedIn {
            scopes,
            client: "client credentials",
        });
    }
    let cimd_supported = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let can_register = metadata.registration_endpoint.is_some();
    manager.set_metadata(metadata);

    // The redirect comes back to this machine only (RFC 8252 loopback redirect).
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot listen for the browser's return: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");

    let mut request = AuthorizationRequest::new(redirect.clone()).with_client_name("Skald");
    let mut dynamic_secret = None;
    let how = if let Some(p) = &record.preregistered {
        request = request.with_preregistered_client(p.client_id.clone());
        if let Some(s) = &p.client_secret {
            request = request.with_client_secret(s.clone());
        }
        "pre-registered"
    } else if let (true, Some(doc)) = (cimd_supported, &oauth.client_metadata_url) {
        request = request.with_client_metadata_url(doc.clone());
        "metadata document"
    } else if can_register {
        // Registered here rather than inside rmcp's session, so a confidential client's
        // secret is kept for refreshing after a restart.
        let scopes = manager.select_scopes(None, &[]);
        let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let config = manager
            .register_client("Skald", &redirect, &refs)
            .await
            .map_err(auth_error)?;
        request = request.with_preregistered_client(config.client_id.clone());
        if let Some(s) = &config.client_secret {
            request = request.with_client_secret(s.clone());
        }
        dynamic_secret = config.client_secret;
        "registered"
    } else {
        return Err(
            "the authorization server takes only clients registered in advance: register \
             Skald there (redirect URI http://127.0.0.1, any port) and run `skald mcp login \
             NAME --client-id ID [--client-secret-env VAR]`"
                .to_string(),
        );
    };
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| auth_error(e))?;
    let scopes = session
        .auth_manager
        .get_current_scopes()
        .await
        .into_iter()
        .collect::<Vec<_>>();
    let auth_url = session.get_authorization_url().to_string();
    if !safe_endpoint(&auth_url) {
        return Err("OAuth: the authorization page is neither https nor on this machine".into());
    }
    // Only the browser coming back from this sign-in is listened to.
    let state = reqwest::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or("OAuth: the authorization request has no state")?;
    open(&auth_url);

    let callback = tokio::time::timeout(wait, returned(&listener, port, &state))
        .await
        .map_err(|_| {
            format!(
                "the browser did not come back within {} s; run the login again",
                wait.as_secs()
            )
        })??;
    session
        .handle_callback_url(&callback)
        .await
        .map_err(auth_error)?;

    // The tokens are saved by rmcp through the store; the rest of the record now.
    let mut saved = read(&oauth.store, url).await?;
    saved.client_secret = dynamic_secret;
    saved.preregistered = record.preregistered;
    saved.challenge = None;
    saved.futile = record.futile;
    saved.machine = false;
    write(&oauth.store, url, &saved).await?;
    Ok(LoggedIn {
        scopes: if scopes.is_empty() {
            saved
                .credentials
                .map(|c| c.granted_scopes)
                .unwrap_or_default()
        } else {
            scopes
        },
        client: how,
    })
}

/// Most bytes of the browser's request read: the redirect is one short GET line.
const REQUEST_MAX: usize = 16 * 1024;

/// Waits for the browser's `GET /callback?…` on the loopback listener and answers it
/// with a page saying where to go next; other requests (a favicon) get a 404. Returns
/// the full callback URL, or the authorization server's error.
async fn returned(
    listener: &tokio::net::TcpListener,
    port: u16,
    state: &str,
) -> Result<String, String> {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            // Out of descriptors, say: a moment, not a spin.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut buf = Vec::new();
        let mut chunk = [0u8; 2048];
        // A client that opens the port and says nothing does not hold the login up.
        let head = tokio::time::timeout(Duration::from_secs(5), async {
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < REQUEST_MAX {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
        })
        .await;
        if head.is_err() {
            continue;
        }
        let text = String::from_utf8_lossy(&buf);
        let target = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("GET "))
            .and_then(|l| l.split(' ').next())
            .unwrap_or("");
        if !target.starts_with("/callback?") {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            continue;
        }
        let url = format!("http://127.0.0.1:{port}{target}");
        let pairs: std::collections::HashMap<String, String> = reqwest::Url::parse(&url)
            .map(|u| u.query_pairs().into_owned().collect())
            .unwrap_or_default();
        // Anything else on this machine may knock: only this sign-in's answer counts.
        if pairs.get("state").map(String::as_str) != Some(state) {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            continue;
        }
        let error = pairs.get("error").map(|e| {
            let text = match pairs.get("error_description") {
                Some(d) => format!("{e}: {d}"),
                None => e.clone(),
            };
            text.chars().take(300).collect::<String>()
        });
        let body = match &error {
            None => "<!doctype html><meta charset=utf-8><title>Skald</title>\
                     <p>Signed in. You can close this tab and go back to Skald.</p>"
                .to_string(),
            Some(_) => "<!doctype html><meta charset=utf-8><title>Skald</title>\
                        <p>The sign-in did not complete; Skald shows why.</p>"
                .to_string(),
        };
        let _ = stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .await;
        let _ = stream.shutdown().await;
        return match error {
            Some(e) => Err(format!("the authorization server refused: {e}")),
            None => Ok(url),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(header: &str) -> WWWAuthenticateParams {
        WWWAuthenticateParams::parse(
            header,
            &reqwest::Url::parse("http://127.0.0.1/mcp").unwrap(),
        )
    }

    fn granted(scopes: &[&str], futile: u32) -> Record {
        Record {
            credentials: Some(StoredCredentials::new(
                "c".into(),
                None,
                scopes.iter().map(|s| s.to_string()).collect(),
                None,
            )),
            futile,
            ..Record::default()
        }
    }

    #[test]
    fn a_refusal_for_access_already_granted_is_answered_once_then_refused() {
        let again = refusal(r#"Bearer error="insufficient_scope", scope="mcp:admin""#);
        assert_eq!(futile(&granted(&["mcp:admin"], 0), Some(&again)), Ok(1));
        let e = futile(&granted(&["mcp:admin"], 1), Some(&again)).unwrap_err();
        assert!(e.contains("already granted (mcp:admin)"), "{e}");
        // Neighbours: more access than granted is a real step-up, and resets the count;
        // a first login or an expired one is never futile.
        let more = refusal(r#"Bearer error="insufficient_scope", scope="mcp:admin mcp:write""#);
        assert_eq!(futile(&granted(&["mcp:admin"], 1), Some(&more)), Ok(0));
        let expired = refusal(r#"Bearer error="invalid_token", scope="mcp:admin""#);
        assert_eq!(futile(&granted(&["mcp:admin"], 1), Some(&expired)), Ok(0));
        assert_eq!(futile(&Record::default(), Some(&again)), Ok(0));
        assert_eq!(futile(&granted(&["mcp:admin"], 5), None), Ok(0));
    }

    /// Answers `GET /.well-known/oauth-authorization-server` with `metadata` and every
    /// other request with 404, on 127.0.0.1; the server's base URL.
    async fn metadata_server(metadata: serde_json::Value) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let body = metadata.to_string().replace("BASE", &base);
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let body = body.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let n = stream.read(&mut buf).await.unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]).to_string();
                    let reply = if head.starts_with("GET /.well-known/oauth-authorization-server ")
                    {
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    } else {
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_string()
                    };
                    let _ = stream.write_all(reply.as_bytes()).await;
                });
            }
        });
        base
    }

    async fn discovered(metadata: serde_json::Value) -> Result<AuthorizationMetadata, String> {
        let base = metadata_server(metadata).await;
        let url = format!("{base}/mcp");
        let manager = AuthorizationManager::new(url.as_str()).await.unwrap();
        discover(&manager, &url, None).await
    }

    #[tokio::test]
    async fn metadata_naming_another_issuer_is_taken_only_from_the_servers_own_origin() {
        // A 2025-03-26 server: metadata at its root, issuer and endpoints under /oauth.
        let own = serde_json::json!({
            "issuer": "BASE/oauth",
            "authorization_endpoint": "BASE/oauth/authorize",
            "token_endpoint": "BASE/oauth/token",
            "registration_endpoint": "BASE/oauth/register",
        });
        let found = discovered(own.clone()).await.unwrap();
        assert!(found.token_endpoint.ends_with("/oauth/token"));
        // Neighbours, each a mix-up: an issuer elsewhere, or any endpoint elsewhere.
        for (field, elsewhere) in [
            ("issuer", "http://127.0.0.2:1/oauth"),
            (
                "authorization_endpoint",
                "http://attacker.example/authorize",
            ),
            ("token_endpoint", "http://attacker.example/token"),
            ("registration_endpoint", "http://attacker.example/register"),
        ] {
            let mut bad = own.clone();
            bad[field] = serde_json::json!(elsewhere);
            let e = discovered(bad).await.unwrap_err();
            assert!(e.contains("issuer check"), "{field}: {e}");
        }
    }

    #[test]
    fn only_https_or_this_machine_is_an_endpoint() {
        for ok in [
            "https://auth.example.com/authorize",
            "https://user@auth.example.com/token",
            "http://localhost:8080/authorize",
            "http://LOCALHOST/token",
            "http://127.0.0.1:9/t",
            "http://127.8.9.10/t",
            "http://[::1]:80/t",
        ] {
            assert!(safe_endpoint(ok), "{ok}");
        }
        for bad in [
            "http://auth.example.com/authorize",
            "http://localhost.example.com/authorize",
            "http://10.0.0.1/token",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "smb://host/share",
            "myapp://callback",
            "data:text/html,hi",
            "not a url",
        ] {
            assert!(!safe_endpoint(bad), "{bad}");
        }
    }

    /// Sends one GET to the listener and returns the status line.
    async fn knock(port: u16, target: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    }

    #[tokio::test]
    async fn the_loopback_listener_takes_only_this_sign_ins_answer() {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(async move { returned(&listener, port, "s-123").await });
        // Forged answers — another state, none, an error with another state, another
        // path — are turned away and the wait goes on.
        assert!(
            knock(port, "/callback?code=evil&state=other")
                .await
                .contains("400")
        );
        assert!(knock(port, "/callback?code=evil").await.contains("400"));
        assert!(
            knock(port, "/callback?error=access_denied&state=x")
                .await
                .contains("400")
        );
        assert!(knock(port, "/favicon.ico").await.contains("404"));
        assert!(!waiting.is_finished());
        assert!(
            knock(port, "/callback?code=good&state=s-123")
                .await
                .contains("200")
        );
        let url = waiting.await.unwrap().unwrap();
        assert!(url.ends_with("/callback?code=good&state=s-123"), "{url}");
    }

    #[test]
    fn a_record_reads_back_and_old_fields_default() {
        let r: Record = serde_json::from_str("{}").unwrap();
        assert!(r.credentials.is_none() && r.challenge.is_none() && r.futile == 0);
        let r = Record {
            challenge: Some("Bearer scope=\"a\"".into()),
            futile: 1,
            ..Record::default()
        };
        let back: Record = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.challenge, r.challenge);
        assert_eq!(back.futile, 1);
    }
}
