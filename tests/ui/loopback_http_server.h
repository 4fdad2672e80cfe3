// A small HTTP/1.1 file server on 127.0.0.1 for the download tests: it serves one body at
// one path, answers Range requests with 206 + Content-Range, and misbehaves on request:
// 404 for everything, a connection cut (RST) after N body bytes, a stall (N body bytes,
// then silence), wrong bytes with the right length, Range ignored (200 for everything), a
// slow trickle (for cancel), no length and a clean close, or chunked framing (whole or cut). A
// client that opens with a TLS handshake gets plain HTTP back, as a misconfigured proxy would send
// it: the client's TLS layer fails. It runs on the test's own event loop (QTcpServer), so nothing
// outside the process is touched and it stops with the test. Header-only and without Q_OBJECT: the
// test binary includes it.
#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QPointer>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <memory>

namespace kvscope::ui::test {

class LoopbackHttpServer {
 public:
  // EndAfter: no Content-Length, and the connection closes cleanly after cut_after bytes
  // (a body cut short that no length reveals). Chunked: Transfer-Encoding: chunked, one chunk
  // per 64 KiB and the closing 0-chunk; with cut_after > 0 a clean close after that many body
  // bytes instead, no closing chunk (a chunked body cut short).
  enum class Mode {
    Serve,
    NotFound,
    CutAfter,
    StallAfter,
    WrongBytes,
    IgnoreRange,
    Slow,
    EndAfter,
    Chunked
  };

  LoopbackHttpServer(QByteArray body, QByteArray path) : body_(std::move(body)), path_(path) {
    QObject::connect(&server_, &QTcpServer::newConnection, [this] { accept(); });
    if (!server_.listen(QHostAddress::LocalHost, 0)) qFatal("cannot listen on 127.0.0.1");
  }

  QByteArray url() const {
    return "http://127.0.0.1:" + QByteArray::number(server_.serverPort()) + path_;
  }
  QByteArray endpoint() const {
    return "http://127.0.0.1:" + QByteArray::number(server_.serverPort());
  }
  void setMode(Mode mode, qint64 cut_after = 0) {
    mode_ = mode;
    cut_after_ = cut_after;
  }
  int requests() const { return requests_; }
  // "bytes=N-" of the last request, empty without one.
  const QByteArray& lastRange() const { return last_range_; }

 private:
  struct Connection {
    QPointer<QTcpSocket> socket;
    QByteArray request;
    QByteArray pending;  // body bytes still to send
    qint64 cut_at = -1;  // abort (or go silent) once this many body bytes were sent
    bool stall = false;
    bool end_cleanly = false;  // EndAfter: close with a FIN, not a reset
    qint64 sent = 0;
    QTimer pump;
  };

  void accept() {
    while (QTcpSocket* socket = server_.nextPendingConnection()) {
      auto c = std::make_shared<Connection>();
      c->socket = socket;
      connections_ << c;
      QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, c] { on_read(*c); });
      QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    }
  }

  void on_read(Connection& c) {
    c.request += c.socket->readAll();
    if (c.request.startsWith('\x16')) {  // a TLS ClientHello: answer in plain text
      c.socket->write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
      c.socket->disconnectFromHost();
      return;
    }
    if (!c.request.contains("\r\n\r\n")) return;
    ++requests_;
    const QList<QByteArray> lines = c.request.split('\n');
    const QList<QByteArray> first = lines.front().trimmed().split(' ');
    last_range_.clear();
    for (const QByteArray& line : lines) {
      if (line.toLower().startsWith("range:")) last_range_ = line.mid(6).trimmed();
    }
    c.request.clear();
    if (mode_ == Mode::NotFound || first.size() < 2 || first[1] != path_) {
      respond(c, "404 Not Found", {}, "no such file\n");
      return;
    }
    QByteArray body = body_;
    if (mode_ == Mode::WrongBytes)
      body[body.size() / 2] = static_cast<char>(body[body.size() / 2] ^ 0x5a);
    static const QRegularExpression range_re(QStringLiteral(R"(^bytes=(\d+)-$)"));
    const auto m = range_re.match(QString::fromLatin1(last_range_));
    if (m.hasMatch() && mode_ != Mode::IgnoreRange) {
      const qint64 start = m.captured(1).toLongLong();
      if (start >= body.size()) {
        respond(c, "416 Range Not Satisfiable",
                "Content-Range: bytes */" + QByteArray::number(body.size()) + "\r\n", {});
        return;
      }
      respond(c, "206 Partial Content",
              "Content-Range: bytes " + QByteArray::number(start) + "-" +
                  QByteArray::number(body.size() - 1) + "/" + QByteArray::number(body.size()) +
                  "\r\n",
              body.mid(start));
      return;
    }
    respond(c, "200 OK", {}, body);
  }

  // Headers at once, then the body 64 KiB at a time from a timer (so the client sees
  // progress, and a cut or a cancel lands mid-body).
  void respond(Connection& c, const QByteArray& status, const QByteArray& headers,
               const QByteArray& body) {
    const bool chunked = mode_ == Mode::Chunked;
    const bool no_length = mode_ == Mode::EndAfter || chunked;
    const QByteArray framing = chunked ? QByteArray("Transfer-Encoding: chunked\r\n")
                               : no_length
                                   ? QByteArray()
                                   : "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    c.socket->write("HTTP/1.1 " + status + "\r\n" + framing +
                    "Content-Type: application/octet-stream\r\n" + headers +
                    (no_length ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n"));
    c.pending = chunked ? in_chunks(body, cut_after_ > 0) : body;
    c.sent = 0;
    const bool cuts = mode_ == Mode::CutAfter || mode_ == Mode::StallAfter ||
                      mode_ == Mode::EndAfter || (chunked && cut_after_ > 0);
    // a chunked body is cut after cut_after bytes of its framed form: close enough to "that
    // many body bytes" for a test that only needs the body to end short
    c.cut_at = cuts ? cut_after_ : -1;
    c.stall = mode_ == Mode::StallAfter;
    c.end_cleanly = mode_ == Mode::EndAfter || chunked;
    c.pump.setInterval(mode_ == Mode::Slow ? 50 : 1);
    c.pump.disconnect();
    QObject::connect(&c.pump, &QTimer::timeout, c.socket, [&c] { pump(c); });
    c.pump.start();
  }

  // body in chunked framing: "<hex size>\r\n<bytes>\r\n" per 64 KiB, then "0\r\n\r\n" unless
  // the body is to be cut (the closing chunk would say it ended).
  static QByteArray in_chunks(const QByteArray& body, bool no_end) {
    QByteArray out;
    for (qsizetype at = 0; at < body.size(); at += 64 * 1024) {
      const QByteArray part = body.mid(at, 64 * 1024);
      out += QByteArray::number(part.size(), 16) + "\r\n" + part + "\r\n";
    }
    if (!no_end) out += "0\r\n\r\n";
    return out;
  }

  static void pump(Connection& c) {
    if (!c.socket || c.pending.isEmpty()) {
      c.pump.stop();
      return;
    }
    qint64 n = std::min<qint64>(64 * 1024, c.pending.size());
    if (c.cut_at >= 0) n = std::min(n, c.cut_at - c.sent);
    c.socket->write(c.pending.left(n));
    c.pending.remove(0, n);
    c.sent += n;
    if (c.cut_at >= 0 && c.sent >= c.cut_at) {
      c.pump.stop();
      if (c.stall) return;  // the connection stays open, silent
      c.socket->waitForBytesWritten(1000);
      if (c.end_cleanly) {
        c.socket->disconnectFromHost();  // a clean close: nothing says the body was cut
        return;
      }
      c.socket->abort();  // a reset, mid-body
    }
  }

  QByteArray body_;
  QByteArray path_;
  Mode mode_ = Mode::Serve;
  qint64 cut_after_ = 0;
  int requests_ = 0;
  QByteArray last_range_;
  QTcpServer server_;
  QList<std::shared_ptr<Connection>> connections_;
};

}  // namespace kvscope::ui::test
