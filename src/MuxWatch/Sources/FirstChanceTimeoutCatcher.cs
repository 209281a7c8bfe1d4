using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading.Channels;
using MuxWatch.Model;

namespace MuxWatch.Sources;

/// <summary>
/// Catches every StackExchange.Redis timeout and connection exception thrown anywhere in the process,
/// with no change to app code, through <see cref="AppDomain.FirstChanceException"/>.
/// </summary>
/// <remarks>
/// The handler runs on the throwing thread, so it does the least it can: a cached type check (a few
/// nanoseconds for every other exception), a once-per-object check (async rethrows raise the event
/// again for the same object), then a non-blocking write to a bounded queue. Reading and diagnosing
/// happen later on <see cref="ReadAllAsync"/>'s consumer. When the queue is full the exception is
/// dropped and counted in <see cref="Dropped"/>, so a storm can never block or grow the app.
/// Types are matched by name, so any client version loaded in the app is caught.
/// </remarks>
internal sealed class FirstChanceTimeoutCatcher : IDisposable
{
    private static readonly ConcurrentDictionary<Type, bool> IsRedisErrorType = new();

    [ThreadStatic]
    private static bool t_handling;

    private readonly ConditionalWeakTable<Exception, object> _seen = [];
    private readonly Channel<CaughtRedisError> _queue;
    private readonly TimeProvider _time;
    private long _dropped;
    private int _started;

    /// <summary>Creates a catcher whose queue holds at most <paramref name="queueCapacity"/> exceptions.</summary>
    public FirstChanceTimeoutCatcher(TimeProvider time, int queueCapacity = 10_000)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(queueCapacity, 1);
        _time = time ?? throw new ArgumentNullException(nameof(time));
        _queue = Channel.CreateBounded<CaughtRedisError>(new BoundedChannelOptions(queueCapacity)
        {
            // Wait, not DropWrite: only then does TryWrite report a full queue, so drops can be counted. TryWrite never waits.
            FullMode = BoundedChannelFullMode.Wait,
            SingleReader = true,
        });
    }

    /// <summary>Exceptions dropped because the queue was full.</summary>
    public long Dropped => Interlocked.Read(ref _dropped);

    /// <summary>True while the catcher is subscribed to first-chance exceptions.</summary>
    public bool IsListening => Volatile.Read(ref _started) == 1;

    /// <summary>Starts listening; calling it again does nothing.</summary>
    public void Start()
    {
        if (Interlocked.Exchange(ref _started, 1) == 0)
        {
            AppDomain.CurrentDomain.FirstChanceException += OnFirstChance;
        }
    }

    /// <summary>The caught exceptions, in the order thrown, until the catcher is disposed.</summary>
    public IAsyncEnumerable<CaughtRedisError> ReadAllAsync(CancellationToken cancellationToken) =>
        _queue.Reader.ReadAllAsync(cancellationToken);

    /// <summary>Stops listening and completes <see cref="ReadAllAsync"/>.</summary>
    public void Dispose()
    {
        AppDomain.CurrentDomain.FirstChanceException -= OnFirstChance;
        Volatile.Write(ref _started, 2);
        _queue.Writer.TryComplete();
    }

    /// <summary>True for <c>StackExchange.Redis.RedisTimeoutException</c> and <c>RedisConnectionException</c>, of any version.</summary>
    internal static bool IsRedisError(Type type) =>
        IsRedisErrorType.GetOrAdd(type, static t =>
            t.FullName is "StackExchange.Redis.RedisTimeoutException" or "StackExchange.Redis.RedisConnectionException");

    private void OnFirstChance(object? sender, FirstChanceExceptionEventArgs e)
    {
        if (t_handling)
        {
            return;
        }

        t_handling = true;
        try
        {
            var exception = e.Exception;
            // The probe's own calls are the probe's to record (ProbeScope), never the app's.
            if (!IsRedisError(exception.GetType()) || Sources.ProbeScope.IsActive || !_seen.TryAdd(exception, exception))
            {
                return;
            }

            if (!_queue.Writer.TryWrite(new CaughtRedisError(exception, _time.GetUtcNow(), ThreadPoolSnapshot.Capture())))
            {
                Interlocked.Increment(ref _dropped);
            }
        }
#pragma warning disable CA1031 // a handler that throws would turn every exception in the app into a crash
        catch (Exception)
#pragma warning restore CA1031
        {
            Interlocked.Increment(ref _dropped);
        }
        finally
        {
            t_handling = false;
        }
    }
}
