package postgres

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// WithSSLMode adds sslmode to a connection string that does not set one
// (a URL gets a query parameter, a keyword string a keyword); "" leaves it
// as it is.
func WithSSLMode(dsn, mode string) string {
	if mode == "" || strings.Contains(dsn, "sslmode") {
		return dsn
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "sslmode=" + url.QueryEscape(mode)
	}
	return strings.TrimSpace(dsn + " sslmode=" + mode)
}

// Keys of a connection Secret: dsn or uri (CloudNativePG's -app Secret
// has uri), else host, port, dbname, user (or username) and password.
const (
	KeyDSN      = "dsn"
	KeyURI      = "uri"
	KeyHost     = "host"
	KeyPort     = "port"
	KeyDBName   = "dbname"
	KeyUser     = "user"
	KeyUsername = "username"
	KeyPassword = "password"
)

// SecretDSN is the connection string of a connection Secret's data: its
// dsn key, else its uri key, else a URL made of host, port, dbname, user
// (or username) and password, each escaped. A Secret with none of these
// is an error naming the keys it needs.
func SecretDSN(data map[string][]byte) (string, error) {
	for _, k := range []string{KeyDSN, KeyURI} {
		if v := strings.TrimSpace(string(data[k])); v != "" {
			return v, nil
		}
	}
	host := strings.TrimSpace(string(data[KeyHost]))
	if host == "" {
		return "", fmt.Errorf("the Secret has no %q, %q or %q key: give a connection string, or the host, port, dbname, user and password keys of CloudNativePG's -app Secret", KeyDSN, KeyURI, KeyHost)
	}
	u := url.URL{Scheme: "postgres", Host: host, Path: "/" + strings.TrimSpace(string(data[KeyDBName]))}
	if port := strings.TrimSpace(string(data[KeyPort])); port != "" {
		if _, err := strconv.Atoi(port); err != nil {
			return "", fmt.Errorf("the Secret's %q key %q is not a number", KeyPort, port)
		}
		u.Host = net.JoinHostPort(host, port)
	}
	user := string(data[KeyUser])
	if user == "" {
		user = string(data[KeyUsername])
	}
	if pw, ok := data[KeyPassword]; ok {
		u.User = url.UserPassword(user, string(pw))
	} else if user != "" {
		u.User = url.User(user)
	}
	return u.String(), nil
}

// Location returns where a connection string leads, host:port and
// database, as pgx reads it (with the PG* environment's defaults), and no
// credential.
func Location(dsn string) (address, database string, err error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "", "", fmt.Errorf("the connection string cannot be parsed (not repeated here: it may hold a password): %w", ErrInvalidConfig)
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), cfg.Database, nil
}
