#!/bin/sh
# A local certificate authority and a certificate for localhost and 127.0.0.1 signed by it, for HTTPS at
# the proxies (docs/https.md). Usage: scripts/local-cert.sh [folder], default ./certs (git ignores it).
# Writes ca.crt and ca.key (the authority), tls.crt and tls.key (the server's: TLS_CERT_FILE, TLS_KEY_FILE).
# Run again, it keeps what is still good: the authority always, the certificate while it has 30 days left.
# mkcert makes them when it is on PATH (LOCAL_CERT_TOOL=openssl to use openssl anyway); nothing is downloaded
# and no trust store is changed: the script prints how to trust the authority.
set -eu

dir=${1:-certs}
mkdir -p "$dir"
cd "$dir"
tool=${LOCAL_CERT_TOOL:-}
if [ -z "$tool" ]; then
    if command -v mkcert >/dev/null 2>&1; then tool=mkcert; else tool=openssl; fi
fi

# The server certificate is kept while the authority signed it and it has 30 days left.
if [ -f ca.crt ] && [ -f tls.crt ] && [ -f tls.key ] &&
    openssl verify -CAfile ca.crt tls.crt >/dev/null 2>&1 &&
    openssl x509 -in tls.crt -noout -checkend 2592000 >/dev/null; then
    echo "kept: $(pwd)/tls.crt (signed by ca.crt, valid 30 days more at least)"
else
    case "$tool" in
    mkcert)
        # mkcert keeps its authority in CAROOT: here, beside the certificate, never installed by this script.
        CAROOT=$(pwd) mkcert -cert-file tls.crt -key-file tls.key localhost 127.0.0.1 ::1
        cp rootCA.pem ca.crt
        cp rootCA-key.pem ca.key
        ;;
    openssl)
        if [ ! -f ca.key ] || [ ! -f ca.crt ]; then
            openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
                -keyout ca.key -out ca.crt -subj "/CN=sample-services local CA $(uname -n)" \
                -addext basicConstraints=critical,CA:TRUE,pathlen:0 \
                -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
        fi
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout tls.key -out tls.csr -subj /CN=localhost 2>/dev/null
        # 825 days: the longest validity macOS accepts for a server certificate.
        printf '%s\n' 'basicConstraints=critical,CA:FALSE' 'keyUsage=critical,digitalSignature' \
            'extendedKeyUsage=serverAuth' 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1' >tls.ext
        openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
            -extfile tls.ext -out tls.crt 2>/dev/null
        rm -f tls.csr tls.ext ca.srl
        ;;
    *)
        echo "$0: LOCAL_CERT_TOOL must be mkcert or openssl, got \"$tool\"" >&2
        exit 1
        ;;
    esac
    echo "made by $tool: $(pwd)/tls.crt and tls.key, for localhost, 127.0.0.1 and ::1, signed by ca.crt"
fi
# The authority's key signs anything: its owner's alone. The server's key is read by the proxy's
# container user (uid 1000) and nginx's, who need not be the owner: a localhost key, readable.
chmod 600 ca.key
chmod 644 ca.crt tls.crt tls.key

ca=$(pwd)/ca.crt
cat <<TRUST

To trust the authority (once; docs/https.md says more, and how to remove it):
  Debian, Ubuntu:  sudo cp $ca /usr/local/share/ca-certificates/sample-services-local.crt && sudo update-ca-certificates
  macOS:           sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain $ca
  Chromium, Firefox on Linux (NSS, libnss3-tools):
                   certutil -d sql:\$HOME/.pki/nssdb -A -t C,, -n sample-services-local -i $ca
  curl, Node:      curl --cacert $ca ...   NODE_EXTRA_CA_CERTS=$ca node ...
TRUST
