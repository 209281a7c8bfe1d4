using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading.Channels;
using MuxWatch.Model;

namespace MuxWatch.Sources;

/// <summary>
/// Catches every StackExchange.Redis timeout and connection exception thrown anywhere in the process,
/// with no change to app code, through <see cref="AppDomain.FirstChanceException"/>; and counts the error
/// replies the app's commands fail with (<c>RedisServerException</c>) by their error code
/// (<see cref="ErrorReplies"/>), since a failover or a load answers many with <c>CLUSTERDOWN</c>,
/// <c>LOADING</c> or <c>READONLY</c> rather than a timeout.
/// </summary>
/// <remarks>
/// The handler runs on the throwing thread, so it does the least it can: a cached type check (a few
/// nanoseconds for every other exception), a once-per-object check (async rethrows raise the event
/// again for the same object), then a non-blocking write to a bounded queue. Reading and diagnosing
/// happen later on <see cref="ReadAllAsync"/>'s consumer. When the queue is full the exception is
/// dropped and counted in <see cref="Dropped"/>, so a storm can never block or grow the app.
/// Types are matched by name, so any client version loaded in the app is caught.
/// </remarks>
internal sealed class FirstChanceRedisErrorCatcher : IDisposable
{
    private static readonly ConcurrentDictionary<Type, byte> KindOfType = new();

    [ThreadStatic]
    private static bool t_handling;

    private readonly ConditionalWeakTable<Exception, object> _seen = [];
    private readonly Channel<CaughtRedisError> _queue;
    private readonly TimeProvider _time;
    private readonly long[] _errorReplies = new long[ErrorReplies.Codes.Count];
    private long _dropped;
    private int _started;

    /// <summary>Creates a catcher whose queue holds at most <paramref name="queueCapacity"/> exceptions.</summary>
    public FirstChanceRedisErrorCatcher(TimeProvider time, int queueCapacity = 10_000)
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

    /// <summary>Error replies caught so far with the code at <paramref name="index"/> of <see cref="ErrorReplies.Codes"/>.</summary>
    public long ErrorRepliesOf(int index) => Interlocked.Read(ref _errorReplies[index]);

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
    internal static bool IsRedisError(Type type) => KindOf(type) == TimeoutOrConnection;

    private const byte Other = 0;
    private const byte TimeoutOrConnection = 1;
    private const byte ErrorReply = 2;

    private static byte KindOf(Type type) =>
        KindOfType.GetOrAdd(type, static t => t.FullName switch
        {
            "StackExchange.Redis.RedisTimeoutException" or "StackExchange.Redis.RedisConnectionException" => TimeoutOrConnection,
            "StackExchange.Redis.RedisServerException" => ErrorReply,
            _ => Other,
        });

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
            var kind = KindOf(exception.GetType());

            // The probe's own calls are the probe's to record (ProbeScope), never the app's.
            if (kind == Other || Sources.ProbeScope.IsActive || !_seen.TryAdd(exception, exception))
            {
                return;
            }

            if (kind == ErrorReply)
            {
                // Counted here, on the throwing thread, without a queue: a lookup of the message's first word.
                Interlocked.Increment(ref _errorReplies[ErrorReplies.IndexOf(exception.Message)]);
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
