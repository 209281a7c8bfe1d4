using System.Threading.RateLimiting;
using Microsoft.Extensions.Options;

namespace MuxWatch.Tool.Api;

/// <summary>
/// Bounds what POSTs may hold at once. Reading a body and processing it are gated apart, so a client
/// that drips its body holds a reading slot (for at most the body-read timeout), never a processing
/// one: the processing permit is taken once the body is in and released as soon as the answer is
/// ready, before it is sent, so a strictly sequential client is never refused.
/// </summary>
/// <remarks>
/// Reading refuses at once (429) past its slots, so memory stays bounded at the reading slots' bodies
/// whatever the rate; a body that is in waits for processing at most <see cref="ProcessingWait"/>.
/// </remarks>
internal sealed class PostGate : IDisposable
{
    /// <summary>Reading slots per processing slot: bodies may arrive slowly, processing is fast.</summary>
    private const int ReadersPerProcessor = 8;

    public PostGate(IOptions<ApiOptions> options)
    {
        var processing = options.Value.MaxConcurrentPosts;
        var readers = Math.Max(64, processing * ReadersPerProcessor);
        Reading = new ConcurrencyLimiter(new ConcurrencyLimiterOptions { PermitLimit = readers, QueueLimit = 0 });

        // A body already read waits its turn (processing takes milliseconds): the queue holds no more
        // than the reading slots, so memory stays bounded by them.
        Processing = new ConcurrencyLimiter(new ConcurrencyLimiterOptions
        {
            PermitLimit = processing,
            QueueLimit = readers,
            QueueProcessingOrder = QueueProcessingOrder.OldestFirst,
        });
    }

    /// <summary>The longest a body that is in waits for a processing slot before it is refused (429).</summary>
    public static readonly TimeSpan ProcessingWait = TimeSpan.FromSeconds(10);

    /// <summary>Bodies being read at once.</summary>
    public ConcurrencyLimiter Reading { get; }

    /// <summary>Bodies being parsed and diagnosed at once (<c>MuxWatch:Api:MaxConcurrentPosts</c>).</summary>
    public ConcurrencyLimiter Processing { get; }

    public void Dispose()
    {
        Reading.Dispose();
        Processing.Dispose();
    }
}
