using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// One poll's commands: each awaited before the next is sent, all within the poll's one deadline, a refusal noted (the
/// poll goes on without that figure), an error reply too long to be a refusal taken as a hostile one, and every command
/// sent observed even when the poll gives up before its answer (<see cref="Dispose"/>).
/// </summary>
/// <remarks>
/// One at a time because a hostile server can make any reply megabytes and the client buffers every pipelined reply
/// whole: so only one reply is ever in flight per endpoint (<see cref="ReplyLimits"/> measures each).
/// </remarks>
internal sealed class PollCommands(DateTimeOffset deadline, TimeProvider time, CancellationToken stopping) : IDisposable
{
    private readonly List<Task> _sent = [];

    /// <summary>The commands the endpoint refused (an ACL, a renamed or disabled command), by the poll's name for them.</summary>
    public List<string> Refused { get; } = [];

    /// <summary>The command's reply; null when the endpoint refused it (noted in <paramref name="refused"/>, or else in <see cref="Refused"/>).</summary>
    public async Task<T?> Answer<T>(Task<T> command, string name, List<string>? refused = null)
        where T : class?
    {
        _sent.Add(command);
        try
        {
            return await command.WaitAsync(Remaining(), time, stopping).ConfigureAwait(false);
        }
        catch (RedisServerException ex)
        {
            OversizedError(name, ex);
            (refused ?? Refused).Add(name); // NOPERM, an unknown (renamed) command, a command the server disabled
            return null;
        }
        catch (RedisCommandException)
        {
            (refused ?? Refused).Add(name); // the client's own refusal (admin mode, a command map that removed it)
            return null;
        }
    }

    /// <summary>The server's clock (<c>TIME</c>); null when refused (noted as above).</summary>
    public async Task<DateTime?> Answer(Task<DateTime> command, string name, List<string>? refused = null)
    {
        _sent.Add(command);
        try
        {
            return await command.WaitAsync(Remaining(), time, stopping).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is RedisServerException or RedisCommandException)
        {
            OversizedError(name, ex);
            (refused ?? Refused).Add(name);
            return null;
        }
    }

    /// <summary>What is left of the poll's timeout (the whole poll has one, however many commands it sends).</summary>
    public TimeSpan Remaining()
    {
        var left = deadline - time.GetUtcNow();
        return left > TimeSpan.Zero ? left : throw new TimeoutException("the poll ran out of its time before every command was answered");
    }

    /// <summary>Nothing left unobserved: a command still pending when the poll gave up fails on its own.</summary>
    public void Dispose()
    {
        foreach (var pending in _sent)
        {
            FireAndForget.Observe(pending);
        }
    }

    /// <summary>An error reply over <see cref="ReplyLimits.MaxErrorChars"/> is no refusal but a hostile reply.</summary>
    private static void OversizedError(string name, Exception error)
    {
        if (error.Message.Length > ReplyLimits.MaxErrorChars)
        {
            throw new OversizedReplyException(name.ToUpperInvariant() + " (an error)", error.Message.Length, ReplyLimits.MaxErrorChars);
        }
    }
}
