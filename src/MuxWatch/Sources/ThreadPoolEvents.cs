using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// Listens to the runtime's thread-pool events (<see cref="ThreadPoolEventListener"/>) while the pool has work to
/// watch, unless <c>MuxWatch:ThreadPoolEvents</c> is off; a starvation they report asks for the workers' stacks
/// (<see cref="PoolStackCapturer"/>, which decides whether to take them).
/// </summary>
/// <remarks>
/// The listener costs an idle app about 0.7 ms of CPU a second (the runtime's EventPipe dispatch thread wakes for every
/// worker that goes to wait: docs/benchmarks.md), and an idle pool has nothing to say. So it listens from the start (an
/// app often starves under its first traffic) and for <see cref="LingerFor"/> after the pool was last seen other than
/// calm by the probe loop (<see cref="PoolSampled"/>, every second), and stops while the pool stays calm: work queued or
/// more workers busy than the minimum start it again within a probe interval, and the runtime says its starvation
/// reason again at every thread it adds.
/// </remarks>
internal sealed class ThreadPoolEvents(
    MuxWatchMetrics metrics, RuntimeHistory history, TimeProvider time, IOptions<MuxWatchOptions> options, PoolStackCapturer capturer)
    : IHostedService, IDisposable
{
    /// <summary>How long the listener stays after the pool was last seen busy or with work queued.</summary>
    internal static readonly TimeSpan LingerFor = TimeSpan.FromMinutes(1);

    /// <summary>
    /// One listener made or disposed at a time in the process. The runtime's <see cref="System.Diagnostics.Tracing.EventListener"/>
    /// takes its listeners' lock and its EventPipe dispatcher's lock in opposite orders on those two paths: two hosts
    /// stopping at once in one process (a test run's in-memory sidecars) hung for good, one thread holding each
    /// (seen in a full test run, with <c>dotnet-stack</c>; dotnet/runtime#96219 reports the same since .NET 8). An app
    /// has one host; this keeps several in one process from meeting there.
    /// </summary>
    private static readonly Lock ListenerGate = new();

    private ThreadPoolEventListener? _listener;
    private bool _started;
    private DateTimeOffset _lastActive;

    /// <summary>True while the listener is on.</summary>
    internal bool Listening
    {
        get
        {
            lock (ListenerGate)
            {
                return _listener is not null;
            }
        }
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        capturer.SayWhyNever();
        if (options.Value.ThreadPoolEvents)
        {
            lock (ListenerGate)
            {
                _started = true;
                _lastActive = time.GetUtcNow();
                _listener ??= new ThreadPoolEventListener(metrics, history, time, capturer);
            }
        }

        return Task.CompletedTask;
    }

    /// <summary>
    /// The probe loop's sample of the pool: one other than calm (work queued, more workers busy than the minimum)
    /// keeps the listener on, or starts it again; one calm for <see cref="LingerFor"/> stops it.
    /// </summary>
    public void PoolSampled(DateTimeOffset now, bool calm)
    {
        lock (ListenerGate)
        {
            if (!_started)
            {
                return;
            }

            if (!calm)
            {
                _lastActive = now;
                _listener ??= new ThreadPoolEventListener(metrics, history, time, capturer);
            }
            else if (_listener is not null && now - _lastActive >= LingerFor)
            {
                _listener.Dispose();
                _listener = null;
            }
        }
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
            _started = false;
            _listener?.Dispose();
            _listener = null;
        }
    }
}
