using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// Listens to the runtime's thread-pool events while the host runs (<see cref="ThreadPoolEventListener"/>), unless
/// <c>MuxWatch:ThreadPoolEvents</c> is off; with <c>MuxWatch:PoolStackCapture</c> on, a starvation they report asks
/// for the workers' stacks (<see cref="PoolStackCapturer"/>).
/// </summary>
internal sealed class ThreadPoolEvents(
    MuxWatchMetrics metrics, RuntimeHistory history, TimeProvider time, IOptions<MuxWatchOptions> options, PoolStackCaptures captures, PoolStackCapturer capturer)
    : IHostedService, IDisposable
{
    private ThreadPoolEventListener? _listener;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        var capture = options.Value.ThreadPoolEvents && options.Value.PoolStackCapture;
        var off = !options.Value.PoolStackCapture ? "it is turned off (MuxWatch:PoolStackCapture=false)"
            : !options.Value.ThreadPoolEvents ? "the runtime's thread-pool events, which ask for it, are not heard (MuxWatch:ThreadPoolEvents=false)"
            : null;
        if ((off ?? (capture ? PoolStackCapturer.WhyUnavailable() : null)) is { } reason)
        {
            captures.MarkUnavailable(reason); // said from the start, in the status and in every starvation timeout
            capture = false;
        }

        if (options.Value.ThreadPoolEvents)
        {
            _listener ??= new ThreadPoolEventListener(metrics, history, time, capture ? capturer : null);
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        Dispose();
        capturer.WaitForCapture(TimeSpan.FromSeconds(5)); // a capture under way removes its temporary files
        return Task.CompletedTask;
    }

    public void Dispose()
    {
        _listener?.Dispose();
        _listener = null;
    }
}
