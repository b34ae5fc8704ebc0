package postgres

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// useRootCAs makes every TLS attempt of a connection verify the server
// against the CA certificates in pem instead of the system's roots: under
// sslmode verify-full the chain and the host name, under verify-ca the
// chain alone. Modes that verify nothing (require, prefer) stay as they
// are.
func useRootCAs(cc *pgconn.Config, pem []byte) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("the CA certificates hold no PEM certificate: %w", ErrInvalidConfig)
	}
	configs := []*tls.Config{cc.TLSConfig}
	for _, fb := range cc.Fallbacks {
		configs = append(configs, fb.TLSConfig)
	}
	for _, tc := range configs {
		if tc == nil {
			continue
		}
		tc.RootCAs = pool
		if tc.InsecureSkipVerify && tc.VerifyPeerCertificate != nil {
			// verify-ca: pgx checks the chain itself, against its own pool.
			tc.VerifyPeerCertificate = verifyChain(pool)
		}
	}
	return nil
}

// verifyChain checks a server's certificate chain against roots, without
// its host name.
func verifyChain(roots *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return fmt.Errorf("the server sent no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, der := range raw {
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return fmt.Errorf("the server's certificate %d: %w", i, err)
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}
}
