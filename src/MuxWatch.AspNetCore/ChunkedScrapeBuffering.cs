using System.Buffers;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace MuxWatch.AspNetCore;

/// <summary>
/// Collects a scrape's text in 256 KiB chunks of pooled memory and sends it a chunk at a time.
/// </summary>
/// <remarks>
/// prometheus-net writes its text through a 16 KiB buffer straight into the response: at 500 endpoints (27,000 series,
/// 2.3 MB) that is about 150 writes, each able to wait for the socket and hand the rest of the render to another pool
/// thread. Rendered whole first (before 2026-11-29), the scrape cost less CPU but held the whole text twice at once,
/// ours and the server's send buffers: a 500-endpoint sidecar's peak resident set rose by 10-12 MB over its 50 scrapes
/// (99-101 MB, against 89-91 streamed; docs/benchmarks.md). A chunk at a time waits for the socket about ten times a
/// scrape and holds at most a chunk. No library offers this for a middleware's output: ASP.NET Core's response
/// buffering holds the whole body, and <see cref="BufferedStream"/> allocates its buffer (here, each scrape's, on the
/// large-object heap) instead of renting it.
/// </remarks>
internal static class ChunkedScrapeBuffering
{
    /// <summary>The chunk: ten of them make a 500-endpoint scrape.</summary>
    internal const int ChunkBytes = 256 * 1024;

    /// <summary>Runs <paramref name="next"/> (the exporter) against a chunking stream over the response.</summary>
    public static async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var original = context.Features.GetRequiredFeature<IHttpResponseBodyFeature>();
        await using var chunks = new ChunkingStream(context.Response, original.Stream);
        context.Features.Set<IHttpResponseBodyFeature>(new StreamResponseBodyFeature(chunks));
        try
        {
            await next(context).ConfigureAwait(false);
            await chunks.FinishAsync(context.RequestAborted).ConfigureAwait(false);
        }
        finally
        {
            context.Features.Set(original);
        }
    }

    /// <summary>
    /// A write-only stream that passes what it is given on to <paramref name="inner"/> a whole chunk at a time, the rest
    /// when finished; a scrape that fits one chunk (an app's, a few hundred series) leaves in one write with its length.
    /// </summary>
    private sealed class ChunkingStream(HttpResponse response, Stream inner) : Stream
    {
        private byte[]? _chunk = ArrayPool<byte>.Shared.Rent(ChunkBytes);
        private int _used;
        private bool _sent;

        public override bool CanRead => false;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            var chunk = _chunk ?? throw new ObjectDisposedException(nameof(ChunkingStream));
            while (!buffer.IsEmpty)
            {
                var taken = Math.Min(buffer.Length, chunk.Length - _used);
                buffer.Span[..taken].CopyTo(chunk.AsSpan(_used));
                (_used, buffer) = (_used + taken, buffer[taken..]);
                if (_used == chunk.Length)
                {
                    await SendAsync(cancellationToken).ConfigureAwait(false);
                }
            }
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        // The exporter's flush at its end: the chunk waits to be filled, or for the end of the scrape.
        public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        /// <summary>Sends what is left: the whole scrape, with its length, when it fits one chunk.</summary>
        public Task FinishAsync(CancellationToken cancellationToken)
        {
            if (!_sent && !response.HasStarted)
            {
                response.ContentLength = _used;
            }

            return SendAsync(cancellationToken);
        }

        // The exporter writes asynchronously; a synchronous write would block a pool thread on the socket.
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException("write asynchronously");

        public override void Flush()
        {
            // Only what is sent asynchronously leaves; a synchronous flush (the framework's, on dispose) has nothing to do.
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing && Interlocked.Exchange(ref _chunk, null) is { } chunk)
            {
                ArrayPool<byte>.Shared.Return(chunk);
            }

            base.Dispose(disposing);
        }

        private async Task SendAsync(CancellationToken cancellationToken)
        {
            if (_used > 0 && _chunk is { } chunk)
            {
                await inner.WriteAsync(chunk.AsMemory(0, _used), cancellationToken).ConfigureAwait(false);
                (_used, _sent) = (0, true);
            }
        }
    }
}
