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
    /// <summary>
    /// One listener made or disposed at a time in the process. The runtime's <see cref="System.Diagnostics.Tracing.EventListener"/>
    /// takes its listeners' lock and its EventPipe dispatcher's lock in opposite orders on those two paths: two hosts
    /// stopping at once in one process (a test run's in-memory sidecars) hung for good, one thread holding each
    /// (seen in a full test run, with <c>dotnet-stack</c>; dotnet/runtime#96219 reports the same since .NET 8). An app
    /// has one host; this keeps several in one process from meeting there.
    /// </summary>
    private static readonly Lock ListenerGate = new();

    private ThreadPoolEventListener? _listener;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        capturer.SayWhyNever();
        if (options.Value.ThreadPoolEvents)
        {
            lock (ListenerGate)
            {
                _listener ??= new ThreadPoolEventListener(metrics, history, time, capturer);
            }
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
        lock (ListenerGate)
        {
            _listener?.Dispose();
            _listener = null;
        }
    }
}
