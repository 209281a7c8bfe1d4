using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// Listens to the runtime's thread-pool events while the host runs (<see cref="ThreadPoolEventListener"/>), unless
/// <c>MuxWatch:ThreadPoolEvents</c> is off; a starvation they report asks for the workers' stacks
/// (<see cref="PoolStackCapturer"/>, which decides whether to take them).
/// </summary>
internal sealed class ThreadPoolEvents(
    MuxWatchMetrics metrics, RuntimeHistory history, TimeProvider time, IOptions<MuxWatchOptions> options, PoolStackCapturer capturer)
    : IHostedService, IDisposable
{
    private ThreadPoolEventListener? _listener;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        capturer.SayWhyNever();
        if (options.Value.ThreadPoolEvents)
        {
            _listener ??= new ThreadPoolEventListener(metrics, history, time, capturer);
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
