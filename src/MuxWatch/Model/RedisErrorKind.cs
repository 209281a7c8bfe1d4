
namespace MuxWatch.Model;

/// <summary>Which of StackExchange.Redis's error messages a text is, judged by its header.</summary>
public enum RedisErrorKind
{
    /// <summary>No known header was found; fields were still read.</summary>
    Unknown,

    /// <summary><c>Timeout performing CMD key (Nms)</c>: a synchronous call ran out of time.</summary>
    SyncTimeout,

    /// <summary><c>Timeout awaiting response (outbound=.., inbound=.., Nms elapsed, timeout is Nms)</c>: an awaited call, found late by the heartbeat.</summary>
    AsyncTimeout,

    /// <summary><c>The message timed out in the backlog ...</c>: never written because no connection became available.</summary>
    BacklogTimeout,

    /// <summary><c>The timeout was reached before the message could be written ...</c>: the write side was too slow.</summary>
    WriteTimeout,

    /// <summary><c>No connection is (active/)available ...</c>, <c>Connection to Redis never succeeded ...</c>.</summary>
    NoConnection,

    /// <summary><c>It was not possible to connect ...</c> or <c>SocketFailure on host:port/Interactive ...</c>.</summary>
    ConnectionFailure,
}
