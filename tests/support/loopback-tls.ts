// A self-signed certificate for 127.0.0.1, valid until 2126, for tests that need a TLS server on
// loopback. The key protects nothing: it exists only for these tests. Made with
//   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 \
//     -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1"
export const LOOPBACK_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBkTCCATagAwIBAgIUJhaikisVB17lyFaF6/HkbnFR2ucwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwMjAxMTQxMloYDzIxMjYxMTA4
MDExNDEyWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQte+ZZSKqAU6WOqbZZ5iEpSQ3nckQovIwwiH6icECCiQaFtcFaP7kj
uxhGxV00SCsAxztAfy+85VpAqn8MTOWZo2QwYjAdBgNVHQ4EFgQUQFFYJAHQEq4p
D6jcQAdKFTTecOUwHwYDVR0jBBgwFoAUQFFYJAHQEq4pD6jcQAdKFTTecOUwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0kAMEYC
IQDnecxHigMtN2ybIWBLPHypYzFlpg8NeBD1nnXpHkfoygIhAJWV57J7Ib/6CQt9
eyCtG84SLamsKNzWT4qLOE/wZygJ
-----END CERTIFICATE-----
`;

export const LOOPBACK_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSjDTwhhRss2kvLpJ
vX24UVEC+CtSW2uDNgv3b/1hGWKhRANCAAQte+ZZSKqAU6WOqbZZ5iEpSQ3nckQo
vIwwiH6icECCiQaFtcFaP7kjuxhGxV00SCsAxztAfy+85VpAqn8MTOWZ
-----END PRIVATE KEY-----
`;
