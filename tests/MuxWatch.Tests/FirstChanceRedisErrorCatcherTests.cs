using System.Runtime.ExceptionServices;
using MuxWatch.Testing;

namespace MuxWatch.Tests;

public sealed class FirstChanceRedisErrorCatcherTests
{
    private const string Message = "Timeout performing GET key (5000ms), inst: 0, qu: 0, qs: 1, in: 0, serverEndpoint: 127.0.0.1:6379";

    [Theory]
    [InlineData("CLUSTERDOWN The cluster is down", "CLUSTERDOWN")]
    [InlineData("OOM command not allowed when used memory > 'maxmemory'.", "OOM")]
    [InlineData("LOADING Redis is loading the dataset in memory", "LOADING")]
    [InlineData("READONLY You can't write against a read only replica.", "READONLY")]
    [InlineData("LOADING", "LOADING")]
    [InlineData("WRONGTYPE Operation against a key holding the wrong kind of value", "other")]
    [InlineData("CLUSTERDOWNED nothing", "other")]
    [InlineData("clusterdown lower case is no code", "other")]
    [InlineData("", "other")]
    [InlineData(null, "other")]
    public void An_error_reply_is_counted_under_its_code_or_other(string? message, string code) =>
        Assert.Equal(code, ErrorReplies.Codes[ErrorReplies.IndexOf(message)]);

    [Fact]
    public async Task A_timeout_rethrown_across_awaits_is_caught_once()
    {
        using var catcher = new FirstChanceRedisErrorCatcher(TimeProvider.System);
        catcher.Start();
        var timeout = RealRedisExceptions.Timeout(Message);

        await Assert.ThrowsAsync<StackExchange.Redis.RedisTimeoutException>(() => ThrowThroughAwaitsAsync(timeout));

        var caught = await ReadAllQueuedAsync(catcher, timeout);
        Assert.Single(caught, c => ReferenceEquals(c.Exception, timeout));
    }

    /// <summary>
    /// A failure is counted, not the calls it reached: 2.6.90 hands one connection exception to every call
    /// waiting on the connection (six in a report), and the hook cannot tell six callers of one object from
    /// one caller rethrowing it across awaits, so it is one failure. Each timed-out call gets an exception
    /// of its own, so timeouts count per call (docs/metrics.md).
    /// </summary>
    [Fact]
    public async Task One_exception_delivered_to_six_waiting_calls_is_one_failure()
    {
        using var catcher = new FirstChanceRedisErrorCatcher(TimeProvider.System);
        catcher.Start();
        var shared = RealRedisExceptions.Timeout(Message);
        var failed = new TaskCompletionSource();
        var callers = Enumerable.Range(0, 6).Select(async _ =>
        {
            await Task.Yield();
            try
            {
                await failed.Task;
            }
            catch (StackExchange.Redis.RedisTimeoutException)
            {
            }
        }).ToList();
        failed.SetException(shared);
        await Task.WhenAll(callers);
        var marker = RealRedisExceptions.Timeout(Message);
        ThrowAndCatch(marker);

        var caught = await ReadAllQueuedAsync(catcher, marker);
        Assert.Single(caught, c => ReferenceEquals(c.Exception, shared));
    }

    [Fact]
    public async Task Exceptions_of_other_types_are_not_queued()
    {
        using var catcher = new FirstChanceRedisErrorCatcher(TimeProvider.System);
        catcher.Start();
        var marker = RealRedisExceptions.Timeout(Message);

        for (var i = 0; i < 100; i++)
        {
            try
            {
                throw new InvalidOperationException("not redis");
            }
            catch (InvalidOperationException)
            {
            }
        }

        ThrowAndCatch(marker);

        // Everything queued before the marker: Redis exceptions of other tests may be there, the 100
        // InvalidOperationExceptions must not.
        var caught = await ReadAllQueuedAsync(catcher, marker);
        Assert.Contains(caught, c => ReferenceEquals(c.Exception, marker));
        Assert.DoesNotContain(caught, c => c.Exception is InvalidOperationException);
    }

    [Fact]
    public void A_full_queue_drops_and_counts_instead_of_blocking()
    {
        using var catcher = new FirstChanceRedisErrorCatcher(TimeProvider.System, queueCapacity: 2);
        catcher.Start();

        for (var i = 0; i < 5; i++)
        {
            ThrowAndCatch(RealRedisExceptions.Timeout(Message));
        }

        Assert.True(catcher.Dropped >= 3, $"dropped {catcher.Dropped}");
    }

    [Fact]
    public void The_sampled_thread_pool_travels_with_the_exception()
    {
        Assert.True(FirstChanceRedisErrorCatcher.IsRedisError(typeof(StackExchange.Redis.RedisTimeoutException)));
        Assert.True(FirstChanceRedisErrorCatcher.IsRedisError(typeof(StackExchange.Redis.RedisConnectionException)));
        Assert.False(FirstChanceRedisErrorCatcher.IsRedisError(typeof(TimeoutException)));
        Assert.False(FirstChanceRedisErrorCatcher.IsRedisError(typeof(StackExchange.Redis.RedisServerException)));
    }

    private static void ThrowAndCatch(Exception exception)
    {
        try
        {
            throw exception;
        }
        catch (Exception)
        {
        }
    }

    private static async Task ThrowThroughAwaitsAsync(Exception exception)
    {
        await Task.Yield();
        try
        {
            await Inner();
        }
        catch (Exception caught)
        {
            ExceptionDispatchInfo.Capture(caught).Throw();
        }

        async Task Inner()
        {
            await Task.Yield();
            throw exception;
        }
    }

    /// <summary>Reads what the catcher holds until <paramref name="last"/> is seen (other tests may throw too).</summary>
    /// <summary>
    /// Everything the catcher queued up to and including <paramref name="last"/>, then whatever follows
    /// it: other tests in this process throw Redis exceptions too, so callers filter what is theirs.
    /// </summary>
    private static async Task<List<CaughtRedisError>> ReadAllQueuedAsync(FirstChanceRedisErrorCatcher catcher, Exception last)
    {
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var caught = new List<CaughtRedisError>();
        await foreach (var item in catcher.ReadAllAsync(deadline.Token))
        {
            caught.Add(item);
            if (ReferenceEquals(item.Exception, last))
            {
                break;
            }
        }

        // Anything queued right after (a second report of the same object) would follow immediately.
        catcher.Dispose();
        await foreach (var item in catcher.ReadAllAsync(CancellationToken.None))
        {
            caught.Add(item);
        }

        return caught;
    }
}
