package api

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"

	"github.com/klauspost/compress/flate"
	"github.com/toolmark/toolmark/fanout"
)

// gzipPieces writes a gzip stream (RFC 1952) whose body is a run of
// deflate pieces, each compressed on its own and ending on a byte
// (klauspost's flate.StatelessDeflate, what its stateless gzip writer
// does for every write). A frame's piece depends on the frame alone, so
// it is compressed once, by the first stream that sends it, and shared by
// every gzip'd follower of the turn (fanout.EncodingSSEDeflate); a stream
// keeps only the checksum and length of what it sent. The header and
// trailer are the few bytes the stateless gzip writer writes.
type gzipPieces struct {
	started bool
	digest  uint32 // CRC-32 of the bytes sent, before compression
	size    uint32 // their length, modulo 2^32
}

// gzipHeader is a gzip member's header: deflate, no flags, no time, an
// unknown system.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

func (z *gzipPieces) head(dst []byte) []byte {
	if z.started {
		return dst
	}
	z.started = true
	return append(dst, gzipHeader...)
}

func (z *gzipPieces) sent(p []byte) {
	z.digest = crc32.Update(z.digest, crc32.IEEETable, p)
	z.size += uint32(len(p))
}

// appendFrame appends f's SSE bytes, compressed.
func (z *gzipPieces) appendFrame(dst []byte, f fanout.Frame) []byte {
	dst = z.head(dst)
	z.sent(f.SSE())
	return append(dst, f.Encoded(fanout.EncodingSSEDeflate, deflateSSE)...)
}

// appendText appends text, compressed for this stream alone.
func (z *gzipPieces) appendText(dst, text []byte) []byte {
	dst = z.head(dst)
	z.sent(text)
	return deflatePiece(dst, text)
}

// appendEnd appends the last (empty) block and the trailer.
func (z *gzipPieces) appendEnd(dst []byte) []byte {
	dst = z.head(dst)
	buf := bytes.NewBuffer(dst)
	_ = flate.StatelessDeflate(buf, nil, true, nil)
	dst = binary.LittleEndian.AppendUint32(buf.Bytes(), z.digest)
	return binary.LittleEndian.AppendUint32(dst, z.size)
}

// deflatePiece appends p deflated on its own, ending on a byte, as a
// block that is not the last.
func deflatePiece(dst, p []byte) []byte {
	if len(p) == 0 {
		return dst
	}
	buf := bytes.NewBuffer(dst)
	_ = flate.StatelessDeflate(buf, p, false, nil) // a bytes.Buffer does not fail
	return buf.Bytes()
}

func deflateSSE(f fanout.Frame) []byte { return deflatePiece(nil, f.SSE()) }
