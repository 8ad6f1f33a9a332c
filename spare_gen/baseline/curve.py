"""The training-curve picture of a baseline run (loss per step, accuracy per epoch), drawn with Pillow."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 720, 360
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 64, 64, 56, 48
FONT_SIZE = 13
BACKGROUND, INK, GRID = (255, 255, 255), (33, 33, 33), (215, 215, 215)
LOSS_RAW, LOSS_SMOOTH = (166, 206, 227), (0, 114, 178)  # Okabe-Ito blue, and a pale version for the raw steps
TRAIN_ACC, VAL_ACC, TEST_ACC, CHANCE = (0, 158, 115), (213, 94, 0), (204, 121, 167), (150, 150, 150)
SMOOTH_WINDOW = 10
PAD = 14  # inner margin, so first and last points stay clear of the frame
FEW_STEPS = 30  # up to this many steps each step's loss is also marked with a dot


def moving_average(values: list[float], window: int = SMOOTH_WINDOW) -> list[float]:
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def curve_png(step_loss: list[float], epoch_steps: list[int], train_acc: list[float], val_acc: list[float],
              chance: float, title: str, test_acc: list[float] = ()) -> bytes:
    """PNG bytes: training loss per step (left axis) and train/val/test accuracy at each epoch end (right axis)."""
    font = ImageFont.load_default(size=FONT_SIZE)
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    x0, x1, y0, y1 = MARGIN_LEFT, WIDTH - MARGIN_RIGHT, MARGIN_TOP, HEIGHT - MARGIN_BOTTOM
    n = max(len(step_loss), 1)
    top = max(step_loss + [1e-6]) * 1.05

    def x_at(step: float) -> float:
        return x0 + PAD + (x1 - x0 - 2 * PAD) * step / n

    def y_loss(v: float) -> float:
        return y1 - (y1 - y0) * v / top

    def y_acc(v: float) -> float:
        return y1 - (y1 - y0) * v

    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_acc(t)
        draw.line([(x0, y), (x1, y)], fill=GRID)
        draw.text((x0 - 6, y), f"{t * top:.2f}", fill=LOSS_SMOOTH, font=font, anchor="rm")
        draw.text((x1 + 6, y), f"{t:.2f}", fill=INK, font=font, anchor="lm")
    draw.rectangle([x0, y0, x1, y1], outline=INK)
    draw.line([(x0, y_acc(chance)), (x1, y_acc(chance))], fill=CHANCE, width=1)
    draw.text((x0 + 4, y_acc(chance) - 2), "chance", fill=CHANCE, font=font, anchor="lb")
    if len(step_loss) <= FEW_STEPS:
        for i, v in enumerate(step_loss):
            x, y = x_at(i + 1), y_loss(v)
            draw.ellipse([x - 2, y - 2, x + 2, y + 2], fill=LOSS_SMOOTH)
    if len(step_loss) > 1:
        draw.line([(x_at(i + 1), y_loss(v)) for i, v in enumerate(step_loss)], fill=LOSS_RAW, width=1)
        draw.line([(x_at(i + 1), y_loss(v)) for i, v in enumerate(moving_average(step_loss))], fill=LOSS_SMOOTH,
                  width=2)
    for values, colour in ((train_acc, TRAIN_ACC), (val_acc, VAL_ACC), (test_acc, TEST_ACC)):
        points = [(x_at(s), y_acc(v)) for s, v in zip(epoch_steps, values) if v == v]
        if len(points) > 1:
            draw.line(points, fill=colour, width=2)
        for x, y in points:
            draw.ellipse([x - 3, y - 3, x + 3, y + 3], fill=colour)
    for i, s in enumerate(epoch_steps):
        draw.text((x_at(s), y1 + 4), str(i + 1), fill=INK, font=font, anchor="ma")
    draw.text(((x0 + x1) / 2, y1 + 8 + FONT_SIZE), "epoch (ticks at epoch ends); steps along the axis", fill=INK,
              font=font, anchor="ma")
    draw.text((x0, 8), title, fill=INK, font=font)
    def last(name: str, values) -> str:  # the latest value in the legend: readable after a single epoch
        return f"{name} {values[-1]:.3f}" if len(values) and values[-1] == values[-1] else name

    legend = [(last("train loss (left axis)", step_loss), LOSS_SMOOTH), (last("train acc.", train_acc), TRAIN_ACC),
              (last("val acc.", val_acc), VAL_ACC), (last("test acc.", test_acc), TEST_ACC)][:4 if test_acc else 3]
    x = x1
    for label, colour in reversed(legend):
        w = draw.textlength(label, font=font)
        x -= w + 22
        draw.rectangle([x, 28, x + 12, 38], fill=colour)
        draw.text((x + 16, 33), label, fill=INK, font=font, anchor="lm")
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()
