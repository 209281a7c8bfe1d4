using System.Globalization;

namespace MuxWatch.Tool.Transport;

/// <summary>
/// A stream over one of MuxWatch's own connections that reads the server's replies as they pass, and fails the read
/// (the client then drops the connection and makes a new one) at the first reply nested deeper than
/// <see cref="MaxDepth"/>, before the client sees it.
/// </summary>
/// <remarks>
/// <para>
/// Why: StackExchange.Redis builds a <c>RedisResult</c> by recursion, one call per level (3.x; 2.x parses every reply so),
/// so a server that answers <c>SLOWLOG GET</c> with an array 200,000 levels deep overflows the stack of the thread that
/// reads it, and a stack overflow ends the process; no catch can stop it. Measured on 3.4.35: about 13,000 levels
/// end a process. MuxWatch's own commands want at most 3 levels (a slow-log entry's arguments), the client's
/// handshake and cluster replies 4; <see cref="MaxDepth"/> leaves room for any real reply.
/// </para>
/// <para>
/// Written by hand because no library checks RESP's nesting in passing: it follows only the framing (a type byte, a
/// line, a length and its body), never keeps a reply, and costs one pass over the bytes it is already given.
/// </para>
/// </remarks>
internal sealed class ReplyDepthGuard(Stream inner) : Stream
{
    /// <summary>The deepest reply let through.</summary>
    public const int MaxDepth = 32;

    private readonly RespNesting _nesting = new(MaxDepth);

    public override bool CanRead => inner.CanRead;

    public override bool CanSeek => false;

    public override bool CanWrite => inner.CanWrite;

    public override bool CanTimeout => inner.CanTimeout;

    public override int ReadTimeout { get => inner.ReadTimeout; set => inner.ReadTimeout = value; }

    public override int WriteTimeout { get => inner.WriteTimeout; set => inner.WriteTimeout = value; }

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        var read = inner.Read(buffer);
        _nesting.Scan(buffer[..read]);
        return read;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        var read = await inner.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
        _nesting.Scan(buffer.Span[..read]);
        return read;
    }

    public override void Write(byte[] buffer, int offset, int count) => inner.Write(buffer, offset, count);

    public override void Write(ReadOnlySpan<byte> buffer) => inner.Write(buffer);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => inner.WriteAsync(buffer, offset, count, cancellationToken);

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => inner.WriteAsync(buffer, cancellationToken);

    public override void Flush() => inner.Flush();

    public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            inner.Dispose();
        }

        base.Dispose(disposing);
    }

    public override async ValueTask DisposeAsync()
    {
        await inner.DisposeAsync().ConfigureAwait(false);
        await base.DisposeAsync().ConfigureAwait(false);
    }
}

/// <summary>
/// Follows RESP2 and RESP3 framing across reads and throws <see cref="IOException"/> when an aggregate opens deeper than
/// its bound, or when what arrives is not RESP at all. Keeps only the count of elements still due at each open level.
/// </summary>
internal sealed class RespNesting(int maxDepth)
{
    private enum Expecting
    {
        Type,
        LineEnd,
        Count,
        Length,
        Body,
    }

    /// <summary>The most digits a count or a length may have (a long's).</summary>
    private const int MaxDigits = 18;

    private readonly Stack<long> _due = new();
    private Expecting _expecting = Expecting.Type;
    private int _perElement;
    private long _number;
    private int _digits;
    private bool _negative;
    private long _bodyLeft;

    /// <summary>How many aggregates are open at this point of the stream.</summary>
    public int Depth => _due.Count;

    public void Scan(ReadOnlySpan<byte> data)
    {
        var i = 0;
        while (i < data.Length)
        {
            switch (_expecting)
            {
                case Expecting.Type:
                    Begin(data[i++]);
                    break;
                case Expecting.LineEnd:
                    var end = data[i..].IndexOf((byte)'\n');
                    if (end < 0)
                    {
                        return;
                    }

                    i += end + 1;
                    _expecting = Expecting.Type;
                    Completed();
                    break;
                case Expecting.Body:
                    var skipped = (int)Math.Min(_bodyLeft, data.Length - i);
                    i += skipped;
                    _bodyLeft -= skipped;
                    if (_bodyLeft == 0)
                    {
                        _expecting = Expecting.Type;
                        Completed();
                    }

                    break;
                default:
                    Digit(data[i++]);
                    break;
            }
        }
    }

    private void Begin(byte type)
    {
        (_number, _digits, _negative) = (0, 0, false);
        switch (type)
        {
            case (byte)'+' or (byte)'-' or (byte)':' or (byte)',' or (byte)'#' or (byte)'_' or (byte)'(':
                _expecting = Expecting.LineEnd;
                break;
            case (byte)'$' or (byte)'=' or (byte)'!':
                _expecting = Expecting.Length;
                break;
            case (byte)'*' or (byte)'~' or (byte)'>':
                (_expecting, _perElement) = (Expecting.Count, 1);
                break;
            case (byte)'%' or (byte)'|':
                (_expecting, _perElement) = (Expecting.Count, 2); // a map's or an attribute's entries are two elements each
                break;
            default:
                throw new IOException(string.Create(CultureInfo.InvariantCulture, $"the server sent a reply that is not RESP (a type byte of 0x{type:x2}): the connection is dropped"));
        }
    }

    private void Digit(byte b)
    {
        switch (b)
        {
            case (byte)'-' when _digits == 0:
                _negative = true;
                return;
            case >= (byte)'0' and <= (byte)'9' when _digits < MaxDigits:
                _number = (_number * 10) + (b - '0');
                _digits++;
                return;
            case (byte)'\r':
                return;
            case (byte)'\n':
                Counted();
                return;
            default:
                throw new IOException("the server sent a reply whose length is not a number: the connection is dropped");
        }
    }

    /// <summary>A count's or a length's line is over.</summary>
    private void Counted()
    {
        if (_expecting == Expecting.Length)
        {
            if (_negative)
            {
                _expecting = Expecting.Type; // a null
                Completed();
            }
            else
            {
                (_expecting, _bodyLeft) = (Expecting.Body, _number + 2); // the body and its line end
            }

            return;
        }

        _expecting = Expecting.Type;
        if (_negative || _number == 0)
        {
            Completed(); // a null or empty aggregate is one element of its parent
            return;
        }

        if (_due.Count >= maxDepth)
        {
            throw new IOException(string.Create(CultureInfo.InvariantCulture,
                $"the server sent a reply nested deeper than {maxDepth} levels (the client reads replies by recursion, and a deep enough one ends the process): the connection is dropped"));
        }

        _due.Push(_number * _perElement);
    }

    /// <summary>An element is over: it counts against the aggregate that holds it, and closes each that it completes.</summary>
    private void Completed()
    {
        while (_due.Count > 0)
        {
            var left = _due.Pop() - 1;
            if (left > 0)
            {
                _due.Push(left);
                return;
            }
        }
    }
}
