//! The redaction corpora: texts with secrets (recall) and texts without (false positives).
//! All secrets are fabricated and have the right shape only.

/// A piece of text, the secrets in it, and the kinds they must be redacted as.
pub struct Leak {
    pub what: &'static str,
    pub text: &'static str,
    pub secrets: &'static [&'static str],
    pub kinds: &'static [&'static str],
}

const PEM_BODY: &str =
    "MIIEowIBAAKCAQEAxseq8gEbo5i1nlk3CV5XJAs0/0EJmbum6TTQAtFTaK1fL55PEzQIy36MexBoGctl";

pub fn recall_corpus() -> Vec<Leak> {
    vec![
        Leak {
            what: "AWS keys in ~/.aws/credentials",
            text: "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n\n[ci]\naws_access_key_id=AKIAPF91DHODZDOC9IS0\naws_secret_access_key=eRzxWkdgeV6/iYplGODlYx5uVECweGThdgH9hmsO\n",
            secrets: &[
                "AKIAIOSFODNN7EXAMPLE",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "AKIAPF91DHODZDOC9IS0",
                "eRzxWkdgeV6/iYplGODlYx5uVECweGThdgH9hmsO",
            ],
            kinds: &["aws_access_key", "high_entropy_secret"],
        },
        Leak {
            what: "AWS session credentials in `aws sts` JSON output",
            text: r#"{
    "Credentials": {
        "AccessKeyId": "ASIAUJZDE8GXD6NCF10E",
        "SecretAccessKey": "yeuCjVr5mXcj5RPD9oUsQChx5s4tI10FtdILQvH/",
        "SessionToken": "FwoGZXIvYXdzEBYaDGx3b2tNZ0dFQnV0QW9WdUlEUhKoAeGjRk8xQ2k9vP1bq7",
        "Expiration": "2026-11-30T05:00:00Z"
    }
}"#,
            secrets: &[
                "ASIAUJZDE8GXD6NCF10E",
                "yeuCjVr5mXcj5RPD9oUsQChx5s4tI10FtdILQvH/",
                "FwoGZXIvYXdzEBYaDGx3b2tNZ0dFQnV0QW9WdUlEUhKoAeGjRk8xQ2k9vP1bq7",
            ],
            kinds: &["aws_access_key", "high_entropy_secret"],
        },
        Leak {
            what: "GitHub tokens of every prefix in shell output",
            text: "$ gh auth status\n  ✓ Token: ghp_jIhKtJ0RlgLKOmxgJTeKdNnFRIBXuDL7Dxtp\n$ cat ~/.config/gh/hosts.yml\ngithub.com:\n    oauth_token: gho_YlSXpfKtHF4vUCsMehGAkWvj7FAc9QeWJKY4\n    user: octocat\nGITHUB_USER_TOKEN=ghu_0uvSwMFLZDe1f8rESQedUStPKR0CsTy4Qwb8\nserver-to-server: ghs_DwkNhFdnXsiVpzz63FfkCzJr4i0B3JrTAwR4 refresh ghr_y9ojfljoQoaF1LlqsajAIxNKu8iS2G8NPRVd\n",
            secrets: &[
                "ghp_jIhKtJ0RlgLKOmxgJTeKdNnFRIBXuDL7Dxtp",
                "gho_YlSXpfKtHF4vUCsMehGAkWvj7FAc9QeWJKY4",
                "ghu_0uvSwMFLZDe1f8rESQedUStPKR0CsTy4Qwb8",
                "ghs_DwkNhFdnXsiVpzz63FfkCzJr4i0B3JrTAwR4",
                "ghr_y9ojfljoQoaF1LlqsajAIxNKu8iS2G8NPRVd",
            ],
            kinds: &["github_token"],
        },
        Leak {
            what: "fine-grained GitHub PAT in a git remote URL",
            text: "$ git remote -v\norigin\thttps://x-access-token: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@github.com/acme/api.git (fetch)\n",
            secrets: &[
                "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",
            ],
            kinds: &["github_token"],
        },
        Leak {
            what: "OpenAI keys in a .env file",
            text: "# OpenAI\nOPENAI_API_KEY=sk-2qHx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM9wCZ7\nOPENAI_PROJECT_KEY=\"sk-proj-SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhT3BlbkFJpmrcXgGCJbW56eCuNGMG\"\nOPENAI_ADMIN=sk-svcacct-zJ59FHz5r1pY4OjE2jBMptUsGr7CmY_uCu3ZR1zT\nDEBUG=true\n",
            secrets: &[
                "sk-2qHx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM9wCZ7",
                "sk-proj-SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhT3BlbkFJpmrcXgGCJbW56eCuNGMG",
                "sk-svcacct-zJ59FHz5r1pY4OjE2jBMptUsGr7CmY_uCu3ZR1zT",
            ],
            kinds: &["openai_key"],
        },
        Leak {
            what: "Anthropic keys in a Python traceback",
            text: "Traceback (most recent call last):\n  File \"agent.py\", line 12, in <module>\n    client = Anthropic(api_key=\"sk-ant-api03-OlUcR64cXQLioDnkHIfxIq2HZt-PlJhx2jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F5n3-YNBDRzrZSgqbjG3uAA\")\nanthropic.AuthenticationError: invalid x-api-key sk-ant-admin01-hkWKFLf6xuI5aHUQPFeNBTxaQWk8JzFalHlsZfYcMMDktXP-tKsf2rcDkdfrUnW5gcF_Ha6ili8GjHEAAA\n",
            secrets: &[
                "sk-ant-api03-OlUcR64cXQLioDnkHIfxIq2HZt-PlJhx2jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F5n3-YNBDRzrZSgqbjG3uAA",
                "sk-ant-admin01-hkWKFLf6xuI5aHUQPFeNBTxaQWk8JzFalHlsZfYcMMDktXP-tKsf2rcDkdfrUnW5gcF_Ha6ili8GjHEAAA",
            ],
            kinds: &["anthropic_key"],
        },
        Leak {
            what: "Slack tokens and a webhook in a config file",
            text: "slack:\n  bot: xoxb-377617409319-2544992070741-SnRFsTHsDDDXh5Jmtf7EbsDe\n  user: xoxp-874633191284-529841537760-2077642656515-0aac36098b2cc2bd818319478da6bd0c\n  app: xapp-1-A099NFD02IS-7082276544446-79fc35526f7eaed46725a2a7b860dcd6c8a1f8b46287cced9041dff02cee7374\n  webhook: https://hooks.slack.com/services/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\n",
            secrets: &[
                "xoxb-377617409319-2544992070741-SnRFsTHsDDDXh5Jmtf7EbsDe",
                "xoxp-874633191284-529841537760-2077642656515-0aac36098b2cc2bd818319478da6bd0c",
                "79fc35526f7eaed46725a2a7b860dcd6c8a1f8b46287cced9041dff02cee7374",
                "SWhgetH8LmyqoYMaaItDr9uP",
            ],
            kinds: &["slack_token", "slack_webhook"],
        },
        Leak {
            what: "Stripe keys in a test log",
            text: "stripe.api_key = sk_live_14pEHpJpb9ATPtdbmF4RPAfq\nINFO restricted key rk_live_oQB7xoFcSvTAxRzmaZsV2Gen loaded\nINFO test mode (sk_test_FmtX0moDoqW4sg8NFNl5oFA6)\nlong key: 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\n",
            secrets: &[
                "sk_live_14pEHpJpb9ATPtdbmF4RPAfq",
                "rk_live_oQB7xoFcSvTAxRzmaZsV2Gen",
                "sk_test_FmtX0moDoqW4sg8NFNl5oFA6",
                "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",
            ],
            kinds: &["stripe_key"],
        },
        Leak {
            what: "Google API keys in JS and a curl line",
            text: "const firebaseConfig = {\n  apiKey: \"AIzaGyiRUIQfHOJMaidDn87XG3-q-xbMtEPO6Uk\",\n  authDomain: \"demo.firebaseapp.com\",\n};\n$ curl 'https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AIzazYuF0ie9Pu2njHkAm1-5wDr16EpLLJIVGHz'\nmaps=AIza4FxFEtKyPiYGFDm7ena8D5VfLDpgyyjVw5H\n",
            secrets: &[
                "AIzaGyiRUIQfHOJMaidDn87XG3-q-xbMtEPO6Uk",
                "AIzazYuF0ie9Pu2njHkAm1-5wDr16EpLLJIVGHz",
                "AIza4FxFEtKyPiYGFDm7ena8D5VfLDpgyyjVw5H",
            ],
            kinds: &["google_api_key"],
        },
        Leak {
            what: "RSA private key printed by cat",
            text: "$ cat deploy_key\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAxseq8gEbo5i1nlk3CV5XJAs0/0EJmbum6TTQAtFTaK1fL55PEzQIy36MexBoGctl\nyshDHcSHDKLbXPffc46FlLDh5RpA/omh22S8zF9DYP1ekyVcVMMUcTotnb71DEvR\nPzQ0HAgI89npz8CiFtPAoaFJehkhGcrBpTRLUVZsQgVZQe5IDLfCXulSxPaagHnZ\n-----END RSA PRIVATE KEY-----\n$ ls\n",
            secrets: &[
                PEM_BODY,
                "yshDHcSHDKLbXPffc46FlLDh5RpA/omh22S8zF9DYP1ekyVcVMMUcTotnb71DEvR",
                "PzQ0HAgI89npz8CiFtPAoaFJehkhGcrBpTRLUVZsQgVZQe5IDLfCXulSxPaagHnZ",
                "BEGIN RSA PRIVATE KEY",
                "END RSA PRIVATE KEY",
            ],
            kinds: &["private_key"],
        },
        Leak {
            what: "OpenSSH, EC and PKCS#8 keys, one inside a JSON string with \\n escapes",
            text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQIs3KbfI8/AzhFkZ2JN0ijS3eYMEo8rUXoVXab3ydDX9ry9kg8PuH7r8nVujDkBG\n-----END OPENSSH PRIVATE KEY-----\n-----BEGIN EC PRIVATE KEY-----\nIJb5ohbI/wpmuY3iZ4uSDGZMGwELMNLreZvEqA/JgOiLnGCdJaCssrCY4K4VNgqq\n-----END EC PRIVATE KEY-----\n{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nEDtllIXlQuLVhVJ6gZYzMDYxFy7Os0pck5BbZ8eE2yY/C+z/fl/dG1+hdskUJ1CY\\n-----END PRIVATE KEY-----\\n\", \"client_email\": \"bot@proj.iam.gserviceaccount.com\"}\n",
            secrets: &[
                "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
                "QIs3KbfI8/AzhFkZ2JN0ijS3eYMEo8rUXoVXab3ydDX9ry9kg8PuH7r8nVujDkBG",
                "IJb5ohbI/wpmuY3iZ4uSDGZMGwELMNLreZvEqA/JgOiLnGCdJaCssrCY4K4VNgqq",
                "EDtllIXlQuLVhVJ6gZYzMDYxFy7Os0pck5BbZ8eE2yY/C+z/fl/dG1+hdskUJ1CY",
            ],
            kinds: &["private_key"],
        },
        Leak {
            what: "a private key cut off by truncated output",
            text: "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAxseq8gEbo5i1nlk3CV5XJAs0/0EJmbum6TTQAtFTaK1fL55PEzQIy36MexBoGctl\nyshDHcSHDKLbXPffc46FlLDh5RpA/omh22S8zF9DYP1ekyVcVMMUcTotnb71DEvR\n[output truncated after 4096 bytes]\n",
            secrets: &[
                PEM_BODY,
                "yshDHcSHDKLbXPffc46FlLDh5RpA/omh22S8zF9DYP1ekyVcVMMUcTotnb71DEvR",
            ],
            kinds: &["private_key"],
        },
        Leak {
            what: "JWTs in an HTTP log, a cookie and JSON",
            text: "GET /api/me HTTP/1.1\nCookie: session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUiLCJpYXQiOjE1MTYyMzkwMjJ9.gESq9u5ItjdWFTKeTzdENN_ynkdWF1Kxy_OcxMrTqVc; theme=dark\n{\"id_token\":\"eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJleHAiOjE4OTM0NTYwMDAsInNjb3BlIjoicmVwbyJ9.HtllAoLNR9li7cHCiHF47EQoRMqvSM8OnPtPhtQjjvc\"}\nws?t=eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.eyJ1c2VyX2lkIjo0Mn0.6A4mxm4nmHN5bTlIuqT8Cins19thEf6RfC0yX2WjT20\n",
            secrets: &[
                "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUiLCJpYXQiOjE1MTYyMzkwMjJ9",
                "gESq9u5ItjdWFTKeTzdENN_ynkdWF1Kxy_OcxMrTqVc",
                "HtllAoLNR9li7cHCiHF47EQoRMqvSM8OnPtPhtQjjvc",
                "6A4mxm4nmHN5bTlIuqT8Cins19thEf6RfC0yX2WjT20",
            ],
            kinds: &["jwt"],
        },
        Leak {
            what: "connection strings with passwords in a stack trace and compose file",
            text: "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server failed\n[SQL: postgres://app:S3cretPass2024@db.internal:5432/app]\nservices:\n  api:\n    environment:\n      MONGO_URL: mongodb+srv://admin:p%40ssW0rd9x@cluster0.ab1cd.mongodb.net/prod?retryWrites=true\n      REDIS_URL: redis://:Hunter2Hunter2@cache:6379/0\n      MYSQL: mysql://root:r00tpw@localhost/shop\n      AMQP: amqps://guest:Gu3stPassw0rd@rabbit:5671/vhost\n",
            secrets: &[
                "S3cretPass2024",
                "p%40ssW0rd9x",
                "Hunter2Hunter2",
                "r00tpw",
                "Gu3stPassw0rd",
            ],
            kinds: &["connection_string_password"],
        },
        Leak {
            what: "secrets assigned to secret names in .env, JSON, YAML and CLI flags",
            text: "API_KEY=bwrHMbgcn33KFLKnq7XrBg8CXL0M9iq1\nexport DB_PASSWORD=\"Wa8mRVtLLCWPgEuxqyhxEykCpZj6R5aD\"\n{\"client_id\": \"web\", \"client_secret\": \"guD5EhjGdO5YQ7nJE1shqWmxBqp7pgys\"}\nauth:\n  password: vs1O38FfaA6WEi3QrplK1xckSxKM2awH\n  signingKey: '1uhLsc4Rr4aKxU3f0BJxrxDwzkl+JwAryNzbi0hS'\n$ mysql --password=Summer2024!x -h db\nSECRET_KEY_BASE=f8333c4774ec50cd1c1bac7adac1a4b7d0b352ad\nlog: {\\\"refresh_token\\\": \\\"5jpTFPWhLn+5drcFlCxvnNGdcmyHc7E4nSmwfIp7\\\"}\n",
            secrets: &[
                "bwrHMbgcn33KFLKnq7XrBg8CXL0M9iq1",
                "Wa8mRVtLLCWPgEuxqyhxEykCpZj6R5aD",
                "guD5EhjGdO5YQ7nJE1shqWmxBqp7pgys",
                "vs1O38FfaA6WEi3QrplK1xckSxKM2awH",
                "1uhLsc4Rr4aKxU3f0BJxrxDwzkl+JwAryNzbi0hS",
                "Summer2024!x",
                "f8333c4774ec50cd1c1bac7adac1a4b7d0b352ad",
                "5jpTFPWhLn+5drcFlCxvnNGdcmyHc7E4nSmwfIp7",
            ],
            kinds: &["high_entropy_secret"],
        },
        Leak {
            what: "bearer and basic credentials in curl -v output",
            text: "> GET /v1/models HTTP/2\n> Host: api.example.com\n> Authorization: Bearer 7f3a9c2e1b4d8f6a0c5e9b2d4f6a8c1e\n> user-agent: curl/8.5.0\n$ http :8080/admin 'authorization:Basic YWRtaW46czNjcjN0UGFzcw=='\n",
            secrets: &[
                "7f3a9c2e1b4d8f6a0c5e9b2d4f6a8c1e",
                "YWRtaW46czNjcjN0UGFzcw==",
            ],
            kinds: &["authorization_header"],
        },
        Leak {
            what: "registry tokens in .npmrc, .pypirc, a GitLab CI log and a Hugging Face login",
            text: "//registry.npmjs.org/:_authToken=npm_C3J27XDCG2LmlZGEONYlgCtjfIZ4SOcMz9CP\n[pypi]\n  username = __token__\n  password = pypi-AgEIcHlwaS5vcmcIRlNQb0prFmbh7_wy5yq1XoY1BaIMcAxYmfsB4HbQLXjjlAFbVV6q9rXxtND\n$ git clone https://oauth2:glpat-ubiheyEd7P4zDL-ak6J0@gitlab.com/acme/infra.git\n$ huggingface-cli login --token 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\n",
            secrets: &[
                "npm_C3J27XDCG2LmlZGEONYlgCtjfIZ4SOcMz9CP",
                "pypi-AgEIcHlwaS5vcmcIRlNQb0prFmbh7_wy5yq1XoY1BaIMcAxYmfsB4HbQLXjjlAFbVV6q9rXxtND",
                "glpat-ubiheyEd7P4zDL-ak6J0",
                "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",
            ],
            kinds: &[
                "npm_token",
                "pypi_token",
                "gitlab_token",
                "huggingface_token",
            ],
        },
        Leak {
            what: "a Django settings file, a Kubernetes Secret and docker run flags",
            text: "# settings.py\nDEBUG = False\nSECRET_KEY = 'django-insecure-%p=mk+^9m(y4#f0dggc6qp+_zq0#5s7l=eio49&%'\n---\napiVersion: v1\nkind: Secret\ndata:\n  password: VHIwdWI0ZG9yJjN4\n  api-token: N2YzYTljMmUxYjRkOGY2YQ==\n---\n$ docker run -e POSTGRES_PASSWORD=Xk9mP2vL8qR4wT6z -e PGDATA=/var/lib/pg postgres:16\n",
            secrets: &[
                "django-insecure-%p=mk+^9m(y4#f0dggc6qp+_zq0#5s7l=eio49&%",
                "VHIwdWI0ZG9yJjN4",
                "N2YzYTljMmUxYjRkOGY2YQ==",
                "Xk9mP2vL8qR4wT6z",
            ],
            kinds: &["high_entropy_secret"],
        },
        Leak {
            what: "a secret removed in a git diff",
            text: "diff --git a/config/prod.yml b/config/prod.yml\nindex 3f2a9c1..9b1c2d3 100644\n--- a/config/prod.yml\n+++ b/config/prod.yml\n@@ -3,4 +3,4 @@ database:\n   host: db.internal\n-  password: q8Zr3LkP0wVx7NmT2bYc\n+  password: ${DB_PASSWORD}\n-stripe: sk_live_14pEHpJpb9ATPtdbmF4RPAfq\n+stripe: ${STRIPE_KEY}\n",
            secrets: &["q8Zr3LkP0wVx7NmT2bYc", "sk_live_14pEHpJpb9ATPtdbmF4RPAfq"],
            kinds: &["high_entropy_secret", "stripe_key"],
        },
    ]
}

/// Ordinary developer text that mentions secrets, hashes and base64 without containing any.
pub const CLEAN_CORPUS: &[(&str, &str)] = &[
    (
        "Cargo.lock",
        r#"[[package]]
name = "aho-corasick"
version = "1.1.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "8e60d3430d3a69478ad0993f19238d2df97c507009a52b3c10addcd7f6bcb916"
dependencies = [
 "memchr",
]

[[package]]
name = "tokenizers"
version = "0.20.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "b67c92f6d705e2a1d106fb0b28c696f9074901a9c656ee5d9f5de204c39bf7"
"#,
    ),
    (
        "package-lock.json",
        r#"{
  "name": "web",
  "lockfileVersion": 3,
  "packages": {
    "node_modules/js-tokens": {
      "version": "4.0.0",
      "resolved": "https://registry.npmjs.org/js-tokens/-/js-tokens-4.0.0.tgz",
      "integrity": "sha512-RdJUflcE3cUzKiMqQgsCu06FPu9UdIJO0beYbPhHN4k6apgJtifcoCtT9bcxOpYBtpD2kCM6Sbzg4CausW/PKQ=="
    },
    "node_modules/jsonwebtoken": {
      "version": "9.0.2",
      "resolved": "https://registry.npmjs.org/jsonwebtoken/-/jsonwebtoken-9.0.2.tgz",
      "integrity": "sha512-PRp66vJ865SSqOlgqS8hujT5U4AOgMfhrwYIuIhfKaoSCZcirrmASQr8CX7cUg+RMih+hgznrjp99o+W4pJLHQ==",
      "dependencies": { "jws": "^3.2.2", "lodash.once": "^4.0.0" }
    }
  }
}"#,
    ),
    (
        "yarn.lock and pnpm-lock.yaml",
        "\"@csstools/css-tokenizer@^2.2.0\":\n  version \"2.2.0\"\n  resolved \"https://registry.yarnpkg.com/@csstools/css-tokenizer/-/css-tokenizer-2.2.0.tgz#3d47e101ad48d815a4bdce8159fb5764f087f17a\"\n  integrity sha512-wErmsWCbsmig8sQKkM6pFhr/oPha1bHfvxsUY5CYSQxwyhA9Ulrs8EqCgClhg4Tgg2XapVstGqSVcz0xOYizZA==\n/secretlint@8.1.2:\n  resolution: {integrity: sha512-dd7Y5xVXzYbwmqGJ8QS33DTx89XyY7KzcaE5OmGPpT9ykzaJCLnuJxQI8BW4w3DFMP6A+PnA62GdXYLzkxX2vQ==}\n",
    ),
    (
        "git log",
        "commit 3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291\nAuthor: Jane Doe <jane@example.com>\nDate:   Mon Nov 30 03:12:44 2026 +0000\n\n    Fix token refresh: retry 3 times before asking for a new password\n\n    Merge pull request #4821 from acme/fix-token-expiry\n    Reviewed-by: Bob <bob@example.com>\n\ncommit 9b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c\n    secrets: rotate the staging API key (see vault, not here)\n",
    ),
    (
        "UUIDs and hex digests in a log",
        "2026-11-30T04:01:02.345Z INFO task=0f8fad5b-d9cb-469f-a165-70867728950e turn=1 request_id=req_01HZX3Y4K5M6N7P8Q9R0S1T2U3\nsha256sum: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt\nimage: ghcr.io/acme/api@sha256:6074dce1118813830d71939b53182e4e349d98729e7c6be9ff907a76cc0b57aa\nmd5 d41d8cd98f00b204e9800998ecf8427e\n",
    ),
    (
        "base64 test fixtures",
        "const FIXTURE: &str = \"SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgZml4dHVyZSB1c2VkIGluIHRlc3RzIG9ubHku\";\nlet png = \"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\";\nlet header = \"eyJpZCI6MTIzNDU2N30\"; // {\"id\":1234567}, not a JWT\nsrc=\"https://cdn.example.com/app.js\" integrity=\"sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC\"\n",
    ),
    (
        "minified JS",
        "!function(e){var t={token:e.token,password:n,apiKey:o.apiKey||\"\",secret:null};function r(n){return n.accessToken=e.getToken(n),n}e.exports={login:function(a,b){return fetch(\"/api/login\",{method:\"POST\",body:JSON.stringify({username:a,password:b})})},refreshToken:u.r1}}(window);",
    ),
    (
        "Rust code about tokens and passwords",
        r#"pub struct Credentials {
    pub token: String,
    pub password: Option<SecretString>,
    api_key: Cow<'static, str>,
}

impl Credentials {
    pub fn from_env() -> Result<Self, Error> {
        let token = std::env::var("GITHUB_TOKEN")?;
        let api_key = env::var("OPENAI_API_KEY").map_err(|_| Error::MissingKey)?;
        let password = self.password.clone();
        if password.is_empty() || token.len() < 8 {
            return Err(Error::Invalid("token too short".into()));
        }
        let max_tokens: u32 = 4096;
        let tokenizer = "cl100k_base";
        Ok(Self { token, password: None, api_key: api_key.into() })
    }
}
"#,
    ),
    (
        "Python and shell",
        "password = getpass.getpass(\"Password: \")\ntoken = os.environ[\"GITHUB_TOKEN\"]\nclient = OpenAI(api_key=os.getenv(\"OPENAI_API_KEY\"))\n$ export OPENAI_API_KEY=$(pass show openai)\n$ curl -H \"Authorization: Bearer $OPENAI_API_KEY\" https://api.openai.com/v1/models\n",
    ),
    (
        "CI workflow and Kubernetes manifest",
        "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\nspec:\n  tls:\n    - secretName: api-tls-cert-2024\n  env:\n    - name: DB_PASSWORD\n      valueFrom:\n        secretKeyRef: { name: db, key: password }\n",
    ),
    (
        ".env.example with placeholders",
        "OPENAI_API_KEY=\nANTHROPIC_API_KEY=your-api-key-here\nDATABASE_URL=postgres://app:${DB_PASSWORD}@localhost:5432/app\nSECRET_KEY=changeme\nJWT_SECRET=<generate with openssl rand -hex 32>\nREDIS_PASSWORD=********\n",
    ),
    (
        "URLs without passwords",
        "https://github.com/acme/api.git\ngit@github.com:acme/api.git\nssh://git@github.com/acme/api.git\npostgres://localhost:5432/app\nhttps://user@example.com/path?token_type=bearer\nhttp://[::1]:8080/healthz\nhttps://hooks.example.com/services/build\n",
    ),
    (
        "prose",
        "Never paste your password or API key into an issue. Set OPENAI_API_KEY in your shell, then run\n`bosun run`. The token: it expires after an hour. Secret management is documented in SECURITY.md.\nCSS: .task-1234567890abcdefghij { color: red } .desk-board { }\n",
    ),
    (
        "a stack trace with addresses",
        "thread 'main' panicked at src/token.rs:42:9:\ncalled `Result::unwrap()` on an `Err` value: InvalidToken\n   0: 0x55d4c2a1b3c4 - std::backtrace_rs::backtrace::libunwind::trace::h5e9f7b3c2a1d4e6f\n   1: 0x7ffd5e8b1a40 - bosun_model::auth::refresh_token::h0a1b2c3d4e5f6a7b\n",
    ),
    (
        "JSON usage and config",
        r#"{"usage": {"input_tokens": 1234, "output_tokens": 56, "cache_read_input_tokens": 10000}, "model": "claude-sonnet-4-5", "max_tokens": 8192, "token_type": "Bearer", "expires_in": 3600, "password_min_length": 12}"#,
    ),
    (
        "test fixtures with readable tokens and a JSON-ish token that is not a JWT",
        "#[test]\nfn rejects_an_expired_token() {\n    let token = \"test-token-123\";\n    let password = \"hunter2\";\n    let header = \"eyJpZCI6MTIzNDU2N30.eyJhIjoxfQ.c2lnbmF0dXJl\";\n    assert_eq!(verify(token, password), Err(AuthError::Expired));\n}\nconst API_KEY_HEADER: &str = \"x-api-key\";\nconst TOKEN_ENV_VAR: &str = \"BOSUN_TOKEN\";\n",
    ),
    (
        "settings reading secrets from the environment",
        "SECRET_KEY = os.environ[\"DJANGO_SECRET_KEY\"]\nconfig.secret_key_base = ENV.fetch(\"SECRET_KEY_BASE\")\nconst token = process.env.GITHUB_TOKEN ?? \"\";\nexport TOKEN=$(gh auth token)\necho \"token=${TOKEN}\" >> \"$GITHUB_OUTPUT\"\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\ntoken_endpoint: https://oauth2.googleapis.com/token\ntokenUrl: https://auth.example.com/oauth/token\n",
    ),
    (
        "pinned hashes: go.sum, pip, Nix, CSP",
        "golang.org/x/crypto v0.31.0 h1:ihbySMvVjLAeSH1IbfcRTkD/iNscyz8rGzjF/E5hV6U=\ngolang.org/x/crypto v0.31.0/go.mod h1:kDsLvtWBEx7MV9tJOj9bnXsPbxwJQ6csT/x4KIYTTU9Y=\nrequests==2.32.3 --hash=sha256:70761cfe03c773ceb22aa2f671b4757976145175cdfca038c02654d061d6dcc6\n  src = fetchFromGitHub { rev = \"v1.2.3\"; hash = \"sha256-Zk4bM1fQH8xS7bqXWjDmq6nQz4zL2y4eW9Zr8Xk3PqY=\"; };\nContent-Security-Policy: script-src 'sha256-B2yPHKaXnvFWtRChIbabYmUBFZdVfKKXHbWtWidDVF8=' 'nonce-r4nd0mN0nc3'\n",
    ),
];
