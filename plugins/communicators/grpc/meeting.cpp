#include "meeting.hpp"

#include <grpcpp/grpcpp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <chrono>
#include <climits>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>

#include "admission.hpp"
#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/log.hpp"
#include "frame_checks.hpp"
#include "star.grpc.pb.h"

namespace dtnn_grpc {

using dtnn::Error;

namespace {

std::chrono::system_clock::time_point wall_clock(Deadline d) {
  if (!d.limited()) return std::chrono::system_clock::time_point::max();
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             d.at - std::chrono::steady_clock::now());
}

std::string property(const grpc::ServerContext& ctx, const char* name) {
  const auto auth = ctx.auth_context();
  if (!auth) return "";
  const auto values = auth->FindPropertyValues(name);
  return values.empty() ? "" : std::string(values.front().data(), values.front().size());
}

struct FreeBio {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct FreeX509 {
  void operator()(X509* x) const { X509_free(x); }
};
struct FreeStore {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct FreeStoreCtx {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};

std::unique_ptr<X509, FreeX509> parse_certificate(const std::string& pem) {
  std::unique_ptr<BIO, FreeBio> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return std::unique_ptr<X509, FreeX509>(
      bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

// Why the certificate a joining rank presented does not admit it ("" when it does): none, or one
// the run's authority did not sign (or expired). The TLS handshake has checked that the rank holds
// its key; rank 0 checks the signature itself, so that it can say who was refused and why.
std::string certificate_problem(const std::string& ca_pem, const std::string& peer_pem) {
  if (peer_pem.empty()) return "it presented no certificate";
  const auto peer = parse_certificate(peer_pem);
  if (!peer) return "its certificate cannot be read";
  std::unique_ptr<X509_STORE, FreeStore> store(X509_STORE_new());
  std::unique_ptr<BIO, FreeBio> bio(
      BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size())));
  int authorities = 0;
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store.get(), ca);
    X509_free(ca);
    ++authorities;
  }
  ERR_clear_error();  // the end of the file reads as an error
  if (authorities == 0) return "rank 0 cannot read the run's authority (tls_ca)";
  std::unique_ptr<X509_STORE_CTX, FreeStoreCtx> ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), peer.get(), nullptr) != 1)
    return "rank 0 could not check its certificate";
  if (X509_verify_cert(ctx.get()) == 1) return "";
  return std::string("its certificate does not verify against the run's authority (") +
         X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get())) + ")";
}

}  // namespace

Pem read_pem(const dtnn_net::TlsFiles& files) {
  return {dtnn::read_file(files.ca), dtnn::read_file(files.cert), dtnn::read_file(files.key)};
}

class Rank0::Service final : public Star::Service {
 public:
  Service(int world_size, const Pem* tls, bool bind_ranks)
      : world_size_(world_size),
        tls_(tls != nullptr),
        ca_(tls ? tls->ca : std::string()),
        bind_ranks_(bind_ranks),
        links_(static_cast<std::size_t>(world_size)) {}

  grpc::Status Join(grpc::ServerContext* ctx,
                    grpc::ServerReaderWriter<Frame, Frame>* stream) override {
    const std::string address = ctx->peer();
    Frame hello;
    if (!stream->Read(&hello)) return grpc::Status::CANCELLED;
    std::future<void> released;
    {
      std::lock_guard lock(mutex_);
      Hello asked;
      std::string refusal = read_hello(hello, asked);
      if (refusal.empty() && closed_) refusal = "every rank has joined already";
      if (refusal.empty() && tls_)
        refusal = certificate_problem(ca_, property(*ctx, "x509_pem_cert"));
      const std::uint32_t rank = asked.rank;
      if (refusal.empty()) {
        const std::string holder =
            rank < links_.size() && links_[rank] ? links_[rank]->peer() : std::string();
        const std::string name = tls_ ? property(*ctx, "x509_common_name") : std::string();
        refusal = dtnn_net::admission_refusal(rank, asked.world, world_size_, holder,
                                              tls_ ? &name : nullptr, bind_ranks_);
      }
      if (!refusal.empty()) {
        Frame no;
        no.set_type(Frame::REFUSAL);
        no.set_payload(refusal);
        stream->Write(no);
        dtnn::log_warning("grpc: " + address + ": " + refusal +
                          ": stream refused; still waiting for " +
                          std::to_string(world_size_ - 1 - joined_) + " rank(s)");
        return {grpc::StatusCode::PERMISSION_DENIED, refusal};
      }
      auto done = std::make_shared<std::promise<void>>();
      released = done->get_future();
      Link::Stream s{[stream](Frame& f) { return stream->Read(&f); },
                     [stream](const Frame& f) { return stream->Write(f); },
                     [] {},
                     [ctx] { ctx->TryCancel(); },
                     [done] { done->set_value(); },
                     [this] { return end_by(); }};
      auto link = std::make_unique<Link>(
          std::move(s), "rank " + std::to_string(rank) + " (" + address + ")", tls_);
      link->send_control(Frame::WELCOME, "");
      links_[rank] = std::move(link);
      ++joined_;
    }
    joined_changed_.notify_all();
    released.wait();  // until rank 0 is done with the stream (its Link's destructor)
    return grpc::Status::OK;
  }

  // Closes the streams of ranks that joined but were never handed over (gather failed): their
  // calls end before the server stops.
  void drop_links() {
    std::vector<std::unique_ptr<Link>> dropped;
    {
      std::lock_guard lock(mutex_);
      dropped = std::move(links_);
      closed_ = true;
    }
  }

  // When rank 0's streams are closed at the latest, counted from when the first closes: the ranks
  // have that long to end their side, together.
  std::chrono::steady_clock::time_point end_by() {
    std::lock_guard lock(mutex_);
    if (!end_by_) end_by_ = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    return *end_by_;
  }

  std::vector<std::unique_ptr<Link>> gather(const dtnn_net::HostPort& server, Deadline deadline) {
    std::unique_lock lock(mutex_);
    auto all = [&] { return joined_ == world_size_ - 1; };
    if (deadline.limited() ? !joined_changed_.wait_until(lock, deadline.at, all)
                           : (joined_changed_.wait(lock, all), false)) {
      dtnn_net::throw_missing_ranks(
          "grpc", world_size_,
          [&](int r) { return links_[static_cast<std::size_t>(r)] != nullptr; }, deadline, server);
    }
    closed_ = true;
    return std::move(links_);
  }

 private:
  const int world_size_;
  const bool tls_;
  const std::string ca_;  // PEM
  const bool bind_ranks_;
  std::mutex mutex_;
  std::condition_variable joined_changed_;
  std::vector<std::unique_ptr<Link>> links_;
  int joined_ = 0;
  bool closed_ = false;
  std::optional<std::chrono::steady_clock::time_point> end_by_;
};

Rank0::Rank0(const dtnn_net::HostPort& server, int world_size, const Pem* tls, bool bind_ranks)
    : server_(server), service_(std::make_unique<Service>(world_size, tls, bind_ranks)) {
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls) {
    // The handshake asks for a certificate and proves the rank holds its key; the service
    // checks the signature (certificate_problem), so that a refused rank is told why and named.
    grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
    options.pem_root_certs = tls->ca;
    options.pem_key_cert_pairs.push_back({tls->key, tls->cert});
    credentials = grpc::SslServerCredentials(options);
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(server.text(), credentials, &port);
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(INT_MAX);
  builder.SetMaxSendMessageSize(INT_MAX);
  grpc_server_ = builder.BuildAndStart();
  if (!grpc_server_ || port == 0)
    throw Error("grpc: rank 0 cannot listen at " + server.text() +
                " (parallel.communicator.server: is the port taken, the host not this machine's?)");
}

Rank0::~Rank0() {
  service_->drop_links();
  // Streams still open (a stranger that never said hello) are cancelled after a second.
  grpc_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

std::vector<std::unique_ptr<Link>> Rank0::gather(Deadline deadline) {
  return service_->gather(server_, deadline);
}

namespace {

struct Call {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<Star::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<Frame, Frame>> stream;
};

}  // namespace

std::unique_ptr<Link> join_rank0(const dtnn_net::HostPort& server, int rank, int world_size,
                                 const Pem* tls, Deadline deadline) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (tls) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = tls->ca;
    options.pem_private_key = tls->key;
    options.pem_cert_chain = tls->cert;
    credentials = grpc::SslCredentials(options);
  }
  auto call = std::make_shared<Call>();
  call->channel = grpc::CreateCustomChannel(server.text(), credentials, args);
  if (!call->channel->WaitForConnected(wall_clock(deadline)))
    throw Error("grpc: rank 0 at " + server.text() + ": no connection within " +
                deadline.seconds_text() + " s (parallel.communicator.connect_timeout_s" +
                (tls ? "; with TLS also when the handshake fails: is tls_cert signed by the "
                       "tls_ca rank 0 was given, and is rank 0's certificate for this host?)"
                     : ")"));
  call->stub = Star::NewStub(call->channel);
  call->stream = call->stub->Join(&call->context);
  Link::Stream s{[call](Frame& f) { return call->stream->Read(&f); },
                 [call](const Frame& f) { return call->stream->Write(f); },
                 [call] { call->stream->WritesDone(); },
                 [call] { call->context.TryCancel(); },
                 [call] { call->stream->Finish(); },
                 {}};
  auto link = std::make_unique<Link>(std::move(s), "rank 0 (" + server.text() + ")", tls);
  link->send_control(Frame::HELLO, hello_payload(static_cast<std::uint32_t>(rank),
                                                 static_cast<std::uint32_t>(world_size)));
  const Frame answer = link->next(deadline, "waiting for rank 0's welcome");
  if (answer.type() == Frame::REFUSAL)
    throw Error("grpc: rank 0 (" + server.text() + ") refused this rank: " + answer.payload());
  if (answer.type() != Frame::WELCOME)
    throw Error("grpc: rank 0 (" + server.text() + ") answered the hello with a frame of type " +
                std::to_string(static_cast<int>(answer.type())));
  return link;
}

}  // namespace dtnn_grpc
