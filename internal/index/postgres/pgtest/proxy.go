package pgtest

import (
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards TCP connections to a database, holding back what clients
// send by a delay that a test sets: a slow network between an operator
// and its database, to stop the operator while a build is under way.
type Proxy struct {
	ln     net.Listener
	target string
	delay  atomic.Int64
	wg     sync.WaitGroup
}

// StartProxy listens on a free loopback port and forwards to target
// (host:port). Close stops it.
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// ProxyDSN starts a Proxy in front of the server of a postgres:// DSN and
// returns it with the DSN that goes through it.
func ProxyDSN(dsn string) (*Proxy, string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, "", err
	}
	p, err := StartProxy(u.Host)
	if err != nil {
		return nil, "", err
	}
	u.Host = p.ln.Addr().String()
	return p, u.String(), nil
}

// SetDelay holds back each piece a client sends by d from now on.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Close stops accepting and waits for the connections to end.
func (p *Proxy) Close() {
	p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Add(2)
		go p.pipe(s, c, true)
		go p.pipe(c, s, false)
	}
}

// pipe copies from src to dst, waiting the delay before each piece when
// slow, and closes both ends when either stops.
func (p *Proxy) pipe(dst, src net.Conn, slow bool) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(p.delay.Load()); slow && d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF or a closed end: either way the connection is over
		}
	}
}
