using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>Listens to the runtime's thread-pool events while the host runs (<see cref="ThreadPoolEventListener"/>), unless <c>MuxWatch:ThreadPoolEvents</c> is off.</summary>
internal sealed class ThreadPoolEvents(MuxWatchMetrics metrics, RuntimeHistory history, TimeProvider time, IOptions<MuxWatchOptions> options) : IHostedService, IDisposable
{
    private ThreadPoolEventListener? _listener;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        if (options.Value.ThreadPoolEvents)
        {
            _listener ??= new ThreadPoolEventListener(metrics, history, time);
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        Dispose();
        return Task.CompletedTask;
    }

    public void Dispose()
    {
        _listener?.Dispose();
        _listener = null;
    }
}
