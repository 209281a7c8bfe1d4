using MuxWatch.Model;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Asks a server how large one key is (<c>MEMORY USAGE key</c>), on MuxWatch's own polling connection, for the
/// diagnosis of a huge value. Whatever the server answers becomes a size or a reason without one: a key gone, a
/// refusal, something that is no number, no answer in time. Never more than one key per endpoint every
/// <see cref="Interval"/>, however many timeouts name it.
/// </summary>
internal static class KeySizeReader
{
    /// <summary>The least time between two keys measured on one endpoint.</summary>
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(5);

    /// <summary>One endpoint's pace: at most one key every <see cref="Interval"/>.</summary>
    public sealed class Pace
    {
        private DateTimeOffset _last = DateTimeOffset.MinValue;

        /// <summary>True (and the time noted) when a key may be asked about at <paramref name="now"/>.</summary>
        public bool Due(DateTimeOffset now)
        {
            if (now - _last < Interval)
            {
                return false;
            }

            _last = now;
            return true;
        }
    }

    /// <summary>The most of a server's refusal kept in the reason.</summary>
    private const int MaxReasonChars = 120;

    public static async Task<KeySize> ReadAsync(IServer server, string key, TimeSpan within, TimeProvider time, CancellationToken stopping)
    {
        RedisResult reply;
        try
        {
            reply = await server.ExecuteAsync("MEMORY", "USAGE", key).WaitAsync(within, time, stopping).ConfigureAwait(false);
        }
        catch (RedisServerException ex)
        {
            var said = ex.Message.Length > MaxReasonChars ? ex.Message[..MaxReasonChars] + "…" : ex.Message;
            return new KeySize(key, null, $"the server refused MEMORY USAGE: {SlowlogReply.Text(said)}");
        }
        catch (RedisCommandException)
        {
            return new KeySize(key, null, "the client refused MEMORY USAGE (a command map without it)");
        }
        catch (Exception ex) when (ex is TimeoutException or RedisTimeoutException)
        {
            return new KeySize(key, null, "MEMORY USAGE was not answered within the poll's timeout");
        }

        if (reply.IsNull)
        {
            return new KeySize(key, null, "the key no longer exists");
        }

        try
        {
            return (long)reply is var bytes and >= 0 ? new KeySize(key, bytes, null) : new KeySize(key, null, "MEMORY USAGE answered a negative size");
        }
        catch (Exception ex) when (ex is InvalidCastException or FormatException or OverflowException)
        {
            return new KeySize(key, null, "MEMORY USAGE answered something other than a size");
        }
    }
}
