using Microsoft.Extensions.Hosting;
using MuxWatch.Export;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>Listens to the runtime's thread-pool events while the host runs (<see cref="ThreadPoolEventListener"/>).</summary>
internal sealed class ThreadPoolEvents(ThreadPoolAdjustments adjustments, MuxWatchMetrics metrics, TimeProvider time) : IHostedService, IDisposable
{
    private ThreadPoolEventListener? _listener;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        _listener ??= new ThreadPoolEventListener(adjustments, metrics, time);
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
